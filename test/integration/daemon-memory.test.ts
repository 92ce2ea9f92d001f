/**
 * The daemon loads only what it uses: a daemon of stdio rows loads no
 * SDK server code, no testing helpers, no HTTP client (the SDK's streamable HTTP
 * transport, undici), no OAuth code (the SDK's client/auth.js and what it pulls in, the
 * pool's oauth modules), no client library or JSON-RPC library (the wire contract is
 * mcpool-protocol's) and no conversation code beyond the registry's shell. The first
 * conversation row loads the conversation code; the first http row loads the HTTP client
 * and OAuth. Read from a real daemon run with a preload that records every module it
 * resolves (test/fixtures/module-log.mjs).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useFleet } from "../helpers/fleet.js";
import { startHttpMcpServer, type HttpMcpServer } from "../helpers/http-mcp-server.js";
import { fixture, waitFor } from "../helpers/processes.js";

const BOUND_MS = 20_000;

const servers: HttpMcpServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
// After the hook above: vitest runs after-hooks last-first, so this teardown comes first.
const fleet = useFleet();

const echo = { command: process.execPath, args: [fixture("echo.mjs")] };
/** The same child, one per conversation. */
const talk = { ...echo, session: "conversation" };
const alice = { tenant: "acme", principal: "alice", conversationId: "c1" };

/** What the SDK's client itself imports from the SDK's server folder: its zod helpers. */
const CLIENT_SHARED = /\/server\/(zod-compat|zod-json-schema-compat)\.js$/;

/** The OAuth code: the SDK's client side of it and the pool's providers. */
const OAUTH =
  /\/sdk\/dist\/esm\/(client\/auth|client\/auth-extensions|shared\/auth|server\/auth\/errors)\.js$|\/dist\/pool\/auth\/(oauth|machine|id-jag)\.js$/;

/** The conversation code: every conversation module but the registry's shell. */
const CONVERSATION = /\/dist\/pool\/conversations\/(?!registry\.js$)[a-z-]+\.js$/;

function loaded(log: string): string[] {
  return existsSync(log) ? [...new Set(readFileSync(log, "utf8").split("\n"))] : [];
}

const sdkServer = (urls: string[]) =>
  urls.filter(
    (u) =>
      u.includes("/@modelcontextprotocol/sdk/dist/esm/server/") &&
      !CLIENT_SHARED.test(u) &&
      !OAUTH.test(u),
  );
const httpClient = (urls: string[]) =>
  urls.filter(
    (u) =>
      u.endsWith("/sdk/dist/esm/client/streamableHttp.js") || u.includes("/node_modules/undici/"),
  );
const oauth = (urls: string[]) => urls.filter((u) => OAUTH.test(u));
const conversation = (urls: string[]) => urls.filter((u) => CONVERSATION.test(u));
/** mcpool-client's files: client/ in this checkout, node_modules/mcpool-client/ installed. */
const clientLibrary = (urls: string[]) =>
  urls.filter((u) => /\/(client|mcpool-client)\/dist\/[^/]+\.js$/.test(u));

describe("the daemon's modules", () => {
  it("are only what a stdio row needs, until a conversation row or an http row loads its own", async () => {
    const h = fleet.home();
    const log = join(h.dir, "modules.txt");
    h.env.NODE_OPTIONS = `--import=${fixture("module-log.mjs")}`;
    h.env.MODULE_LOG = log;
    h.writeConfig({ echo });
    await fleet.daemon(h);
    const c = await fleet.agent(h, "memory");
    expect(await c.call("echo__echo", { text: "stdio" })).toBe("stdio");

    const stdioOnly = loaded(log);
    // The preload saw the daemon's own modules: the record is of this process.
    expect(stdioOnly.some((u) => u.endsWith("/dist/daemon/daemon.js"))).toBe(true);
    expect(stdioOnly.some((u) => u.endsWith("/dist/pool/conversations/registry.js"))).toBe(true);
    // The pool's own client (mcp-client.ts): neither the SDK's Client nor AJV, and none of
    // the SDK's zod schemas (types.js) nor zod itself.
    expect(
      stdioOnly.filter((u) =>
        /\/sdk\/dist\/esm\/(client\/index|shared\/protocol|types)\.js$/.test(u),
      ),
    ).toEqual([]);
    expect(stdioOnly.filter((u) => /\/node_modules\/(ajv|zod)\//.test(u))).toEqual([]);
    expect(sdkServer(stdioOnly)).toEqual([]);
    expect(stdioOnly.filter((u) => u.includes("/dist/testing/"))).toEqual([]);
    expect(httpClient(stdioOnly)).toEqual([]);
    expect(oauth(stdioOnly)).toEqual([]);
    expect(conversation(stdioOnly)).toEqual([]);
    // The wire contract comes from mcpool-protocol: of the client library only its socket
    // path (the one definition both sides share), and no JSON-RPC library.
    expect(clientLibrary(stdioOnly)).toEqual([expect.stringMatching(/\/dist\/paths\.js$/)]);
    expect(stdioOnly.filter((u) => u.includes("/node_modules/json-rpc-2.0/"))).toEqual([]);

    // A conversation row: its code loads, and serves a conversation its own child.
    h.writeConfig({ echo, talk });
    await waitFor(
      async () => (await c.state()).some((s) => s.id === "talk"),
      BOUND_MS,
      "the conversation row to be registered",
    );
    expect(await c.withIdentity(alice).call("talk__echo", { text: "mine" })).toBe("mine");
    const [stats] = await c.conversations.stats(["talk"]);
    expect(stats).toMatchObject({ serverId: "talk", clients: 1 });
    const withConversation = loaded(log);
    expect(conversation(withConversation)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/conversations\/row\.js$/),
        expect.stringMatching(/\/conversations\/calls\.js$/),
      ]),
    );
    // A stdio conversation row signs nobody in.
    expect(oauth(withConversation)).toEqual([]);
    expect(httpClient(withConversation)).toEqual([]);

    // An http row: the HTTP client and OAuth load with it.
    const remote = await startHttpMcpServer();
    servers.push(remote);
    h.writeConfig({ echo, talk, remote: { url: remote.url } });
    await waitFor(
      async () => (await c.state()).find((s) => s.id === "remote")?.status === "ready",
      BOUND_MS,
      "the http row to be ready",
    );
    const withHttp = loaded(log);
    expect(withHttp.filter((u) => u.endsWith("/client/streamableHttp.js"))).toHaveLength(1);
    expect(withHttp.some((u) => u.includes("/node_modules/undici/"))).toBe(true);
    expect(oauth(withHttp)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/sdk\/dist\/esm\/client\/auth\.js$/),
        expect.stringMatching(/\/sdk\/dist\/esm\/shared\/auth\.js$/),
        expect.stringMatching(/\/dist\/pool\/auth\/oauth\.js$/),
      ]),
    );
    expect(sdkServer(withHttp)).toEqual([]);
  });
});
