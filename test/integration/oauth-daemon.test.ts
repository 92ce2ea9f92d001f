/**
 * OAuth through a real daemon: `mcpool login` against a loopback OAuth-protected server
 * (its browser played by a fetch of the URL it prints), the token surviving a daemon
 * restart, `mcpool logout`, and the canary: a token that appears in no status, event, log
 * line, tools cache file or mcp.json — only in the daemon's 0600 token store.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { PoolClient, PoolEvent } from "mcpool-client";
import {
  cliPath,
  client,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { InMemoryProvider, startOAuthServer, type OAuthServer } from "../helpers/oauth-server.js";
import { filesUnder } from "../helpers/files.js";

const CANARY = "canary-oauth-7d1f";
const BOUND_MS = 20_000;

const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  while (cleanups.length > 0) await Promise.resolve(cleanups.pop()!()).catch(() => undefined);
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `mcpool …` as a child; `onStderr` sees its stderr as it arrives. Never blocks the loop. */
function mcpool(home: TestHome, args: string[], onStderr?: (text: string) => void): Promise<Run> {
  const child = spawn(process.execPath, [cliPath, ...args], {
    env: home.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    onStderr?.(stderr);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), BOUND_MS);
  cleanups.push(() => void (child.exitCode === null && child.kill("SIGKILL")));
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** `mcpool login ID --no-browser`, with the printed URL fetched as a browser would. */
function login(home: TestHome, id: string): Promise<Run> {
  let opened = false;
  return mcpool(home, ["login", id, "--no-browser"], (stderr) => {
    const url = /https?:\/\/\S+\/authorize\?\S+/.exec(stderr)?.[0];
    if (url === undefined || opened) return;
    opened = true;
    void fetch(url).then((response) => response.body?.cancel());
  });
}

async function up(home: TestHome): Promise<{ daemon: RunningDaemon; agent: PoolClient }> {
  const daemon = await startDaemon(home);
  cleanups.push(() => daemon.stop());
  const agent = await client(home);
  cleanups.push(() => agent.close());
  return { daemon, agent };
}

/** Polls the daemon until the server has the status; bounded. */
async function until(agent: PoolClient, id: string, want: string): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  let last: string | undefined;
  for (;;) {
    last = (await agent.state()).find((s) => s.id === id)?.status;
    if (last === want) return;
    if (Date.now() > deadline)
      throw new Error(`${id} is ${last}, not ${want}, after ${BOUND_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("OAuth through the daemon", () => {
  it("signs in with `mcpool login`, keeps the token across a restart, forgets it on logout, and never shows it", async () => {
    const remote: OAuthServer = await startOAuthServer({ tokenPrefix: CANARY });
    cleanups.push(() => remote.close());
    const home = testHome("mcpool-oauth-");
    cleanups.push(() => home.remove());
    home.writeConfig({ gh: { type: "http", url: remote.url } });

    const first = await up(home);
    const events: PoolEvent[] = [];
    first.agent.onEvent((event) => events.push(event));
    await until(first.agent, "gh", "auth-required");
    const refused = await first.agent.call("gh__whoami").catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "auth-required" });
    expect((refused as Error).message).toContain("mcpool login gh");

    const signedIn = await login(home, "gh");
    expect(signedIn.stderr).toContain("/authorize?");
    expect(signedIn.stdout).toContain('signed in to "gh"; the server is ready');
    expect(signedIn.code).toBe(0);
    expect(remote.stats).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 });
    expect(await first.agent.call("gh__whoami")).toBe("hello from whoami");
    expect(events.some((e) => e.type === "connect" && e.serverId === "gh")).toBe(true);

    // The token store: one 0600 file in a 0700 directory, holding the live token.
    const dataDir = join(home.dir, "data", "mcpool");
    const tokenDir = join(dataDir, "oauth");
    expect(statSync(tokenDir).mode & 0o777).toBe(0o700);
    const tokenFiles = readdirSync(tokenDir);
    expect(tokenFiles).toHaveLength(1);
    const tokenFile = join(tokenDir, tokenFiles[0]!);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(tokenFile, "utf8")).toContain(`${CANARY}-access-`);

    // The canary: nowhere else.
    const status = await mcpool(home, ["status", "--json"]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).servers[0].status).toBe("ready");
    const outputs = {
      status: status.stdout,
      stateWithSecrets: JSON.stringify(await first.agent.state({ secrets: true })),
      events: JSON.stringify(events),
      loginOutput: signedIn.stdout + signedIn.stderr,
      daemonStderr: first.daemon.stderr(),
      config: readFileSync(home.configPath, "utf8"),
    };
    for (const [name, text] of Object.entries(outputs)) {
      expect(text.includes(CANARY), `${name} holds the token`).toBe(false);
    }
    const cacheFiles = filesUnder(join(dataDir, "tools-cache"), "utf8");
    expect(cacheFiles.length).toBeGreaterThan(0);
    const logFiles = filesUnder(join(home.dir, "state", "mcpool"));
    expect(logFiles.length).toBeGreaterThan(0);
    for (const { path, text } of [...cacheFiles, ...logFiles]) {
      expect(text.includes(CANARY), `${path} holds the token`).toBe(false);
    }

    // A new daemon reads the store: connected without a login.
    await first.agent.close();
    expect(await first.daemon.stop()).toBe(0);
    const second = await up(home);
    await until(second.agent, "gh", "ready");
    expect(await second.agent.call("gh__whoami")).toBe("hello from whoami");
    expect(remote.stats.authorizations).toBe(1);
    expect(second.daemon.stderr().includes(CANARY)).toBe(false);

    const out = await mcpool(home, ["logout", "gh"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('signed out of "gh"; the server is auth-required');
    expect(existsSync(tokenFile)).toBe(false);
    await until(second.agent, "gh", "auth-required");
  });

  it("signs in by itself with client credentials from mcp.json, takes a new token when one expires, and never shows the secret or the token", async () => {
    const secret = "canary-secret-5b2e";
    const remote = await startOAuthServer({
      tokenPrefix: CANARY,
      machineClient: { clientId: "svc", clientSecret: secret },
    });
    cleanups.push(() => remote.close());
    const home = testHome("mcpool-oauth-");
    cleanups.push(() => home.remove());
    // The secret reaches the daemon as a variable, the way a service's environment file would.
    home.env.SVC_SECRET = secret;
    home.writeConfig({
      svc: {
        type: "http",
        url: remote.url,
        auth: { grant: "client_credentials", clientId: "svc", clientSecret: "${SVC_SECRET}" },
      },
    });
    const { daemon, agent } = await up(home);
    const events: PoolEvent[] = [];
    agent.onEvent((event) => events.push(event));
    await until(agent, "svc", "ready");
    expect(await agent.call("svc__whoami")).toBe("hello from whoami");
    expect(remote.stats).toMatchObject({ clientCredentials: 1, authorizations: 0 });

    // An expired token is met with another grant: nobody is asked.
    remote.expireAccessTokens();
    expect(await agent.call("svc__whoami")).toBe("hello from whoami");
    expect(remote.stats.clientCredentials).toBe(2);
    const login = await mcpool(home, ["login", "svc", "--no-browser"]);
    expect(login.code).toBe(0);
    expect(login.stdout).toContain("signs in by itself with its client credentials");

    const status = await mcpool(home, ["status", "--json"]);
    const withSecrets = JSON.stringify(await agent.state({ secrets: true }));
    // Secrets asked for are the row as written: the placeholder, not what it stands for.
    expect(withSecrets).toContain("${SVC_SECRET}");
    const outputs: Record<string, string> = {
      status: status.stdout,
      state: JSON.stringify(await agent.state()),
      stateWithSecrets: withSecrets,
      events: JSON.stringify(events),
      loginOutput: login.stdout + login.stderr,
      daemonStderr: daemon.stderr(),
      config: readFileSync(home.configPath, "utf8"),
    };
    const files = [
      ...filesUnder(join(home.dir, "data")),
      ...filesUnder(join(home.dir, "state")),
      ...filesUnder(join(home.dir, "cache")),
    ];
    expect(files.length).toBeGreaterThan(0);
    for (const { path, text } of files) outputs[path] = text;
    for (const [name, text] of Object.entries(outputs)) {
      expect(text.includes(CANARY), `${name} holds the token`).toBe(false);
      expect(text.includes(secret), `${name} holds the client secret`).toBe(false);
    }
  });

  it("signs in to a 2025-03-26-style server whose metadata names another issuer, as the SDK client does directly, and says so in status", async () => {
    // No protected-resource metadata; the metadata at the origin's root names origin + /oauth.
    const remote = await startOAuthServer({ legacyIssuerPath: "/oauth" });
    cleanups.push(() => remote.close());

    // Direct, the oracle: the SDK client signs in (its browser played by a fetch) and calls.
    const direct = new InMemoryProvider("http://127.0.0.1:9/callback");
    const first = new Client({ name: "direct", version: "1.0.0" });
    const refused = await first
      .connect(new StreamableHTTPClientTransport(new URL(remote.url), { authProvider: direct }))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UnauthorizedError);
    const back = await fetch(direct.authorizationUrl!, { redirect: "manual" });
    const code = new URL(back.headers.get("location")!).searchParams.get("code")!;
    const finishing = new StreamableHTTPClientTransport(new URL(remote.url), {
      authProvider: direct,
    });
    await finishing.finishAuth(code);
    const sdk = new Client({ name: "direct", version: "1.0.0" });
    cleanups.push(() => sdk.close());
    await sdk.connect(
      new StreamableHTTPClientTransport(new URL(remote.url), { authProvider: direct }),
    );
    const called = (await sdk.callTool({ name: "whoami", arguments: {} })) as {
      content: { type: string; text: string }[];
    };

    // Through the pool: `mcpool login`, then the same call.
    const home = testHome("mcpool-oauth-");
    cleanups.push(() => home.remove());
    home.writeConfig({ old: { type: "http", url: remote.url, auth: "oauth" } });
    const { agent } = await up(home);
    await until(agent, "old", "auth-required");
    const signedIn = await login(home, "old");
    expect(signedIn.stdout + signedIn.stderr).toContain('signed in to "old"');
    expect(signedIn.code).toBe(0);
    expect(await agent.call("old__whoami")).toBe(called.content[0]!.text);

    const notice = `names the issuer ${JSON.stringify(`${remote.origin}/oauth`)}`;
    const json = await mcpool(home, ["status", "--json"]);
    expect(JSON.parse(json.stdout).servers[0].signInNotice).toContain(notice);
    const text = await mcpool(home, ["status"]);
    expect(text.stdout).toContain(`old: sign-in: the server publishes no protected-resource`);
  });

  it("on a terminal, shows a progress line while it waits for the browser, and erases it", async () => {
    const remote: OAuthServer = await startOAuthServer({ tokenPrefix: CANARY });
    cleanups.push(() => remote.close());
    const home = testHome("mcpool-oauth-");
    cleanups.push(() => home.remove());
    home.writeConfig({ gh: { type: "http", url: remote.url } });
    const { agent } = await up(home);
    await until(agent, "gh", "auth-required");

    // `script` gives login a pseudo-terminal, as a person's shell would. The "browser" only
    // follows the URL once the line that says login is waiting for it has been drawn.
    const command = [process.execPath, cliPath, "login", "gh", "--no-browser"]
      .map((a) => `'${a}'`)
      .join(" ");
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      env: home.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanups.push(() => void (child.exitCode === null && child.kill("SIGKILL")));
    let screen = "";
    let opened = false;
    child.stdout.on("data", (chunk: Buffer) => {
      screen += chunk.toString();
      const url = /https?:\/\/\S+\/authorize\?\S+/.exec(screen)?.[0];
      if (
        opened ||
        url === undefined ||
        !/waiting for the sign-in to "gh" in the browser \(\d+s\)/.test(screen)
      )
        return;
      opened = true;
      void fetch(url).then((response) => response.body?.cancel());
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), BOUND_MS);
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    clearTimeout(timer);
    expect(opened).toBe(true);
    expect(code).toBe(0);
    // The line is erased before the result is printed.
    const erased = screen.lastIndexOf("\r\u001b[K");
    expect(erased).toBeGreaterThan(-1);
    expect(screen.slice(erased)).toContain('signed in to "gh"; the server is ready');
  });

  it("refuses to log in to an unknown server or a stdio one, with exit code 2", async () => {
    const home = testHome("mcpool-oauth-");
    cleanups.push(() => home.remove());
    home.writeConfig({ local: { command: "true", disabled: true } });
    await up(home);
    const unknown = await mcpool(home, ["login", "nope", "--no-browser"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown server "nope"');
    const stdio = await mcpool(home, ["login", "local", "--no-browser"]);
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toContain("only http servers sign in");
  });
});
