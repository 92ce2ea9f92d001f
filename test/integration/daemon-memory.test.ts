/**
 * The daemon loads only what it uses (issue 16 item 3): a daemon of stdio rows loads no
 * SDK server code, no testing helpers and no HTTP client (the SDK's streamable HTTP
 * transport, undici); the first http row loads them. Read from a real daemon run with a
 * preload that records every module it resolves (test/fixtures/module-log.mjs).
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

/**
 * What the SDK's client itself imports from the SDK's server folder: its zod helpers, and
 * the OAuth error classes of client/auth.js (the pool's oauth.ts still loads eagerly). No
 * server.
 */
const CLIENT_SHARED = /\/server\/(zod-compat|zod-json-schema-compat|auth\/errors)\.js$/;

function loaded(log: string): string[] {
  return existsSync(log) ? [...new Set(readFileSync(log, "utf8").split("\n"))] : [];
}

const sdkServer = (urls: string[]) =>
  urls.filter(
    (u) => u.includes("/@modelcontextprotocol/sdk/dist/esm/server/") && !CLIENT_SHARED.test(u),
  );
const httpClient = (urls: string[]) =>
  urls.filter(
    (u) =>
      u.endsWith("/sdk/dist/esm/client/streamableHttp.js") || u.includes("/node_modules/undici/"),
  );

describe("the daemon's modules", () => {
  it("are only what a stdio row needs, until an http row loads the HTTP client", async () => {
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
    // The pool's own client (mcp-client.ts): neither the SDK's Client nor AJV.
    expect(
      stdioOnly.filter((u) => /\/sdk\/dist\/esm\/(client\/index|shared\/protocol)\.js$/.test(u)),
    ).toEqual([]);
    expect(stdioOnly.filter((u) => u.includes("/node_modules/ajv/"))).toEqual([]);
    expect(sdkServer(stdioOnly)).toEqual([]);
    expect(stdioOnly.filter((u) => u.includes("/dist/testing/"))).toEqual([]);
    expect(httpClient(stdioOnly)).toEqual([]);

    const remote = await startHttpMcpServer();
    servers.push(remote);
    h.writeConfig({ echo, remote: { url: remote.url } });
    await waitFor(
      async () => (await c.state()).find((s) => s.id === "remote")?.status === "ready",
      BOUND_MS,
      "the http row to be ready",
    );
    const withHttp = loaded(log);
    expect(withHttp.filter((u) => u.endsWith("/client/streamableHttp.js"))).toHaveLength(1);
    expect(withHttp.some((u) => u.includes("/node_modules/undici/"))).toBe(true);
    expect(sdkServer(withHttp)).toEqual([]);
  });
});
