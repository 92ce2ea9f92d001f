/**
 * The secrets canary (test/faults.ts, "Secrets"), through a real daemon. Distinctive values
 * go into rows' `env` and `headers` — written literally, and through a `${VAR}` the daemon's
 * environment fills — and every server is made to fail the ways servers fail: a command
 * that does not exist, a child that quotes its key on stderr and exits, a child that
 * crashes mid-call, a remote that answers 401 quoting the credentials it was sent. Then
 * everything a person or an agent can see is searched for the canaries: `mcpool status
 * --json`, the client's status(), state() and tools(), every event, every error message,
 * the daemon's stderr, and every file in its data, state and runtime directories. Only
 * `state({ secrets: true })` may show them, and even it shows the placeholder, never what
 * it expanded to.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { PoolClient, PoolEvent } from "mcpool-client";
import {
  client,
  cliPath,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { filesUnder } from "../helpers/files.js";
import { fixture, nextMatching } from "../helpers/processes.js";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe("secrets", () => {
  it("never show a canary in status, events, logs, errors or files, however the servers fail", async () => {
    const tag = randomUUID().slice(0, 8);
    const canary = {
      leakyKey: `canary-leaky-env-${tag}`,
      crasherKey: `canary-crasher-env-${tag}`,
      missingKey: `canary-spawnfail-env-${tag}`,
      echoKey: `canary-echo-env-${tag}`,
      header: `canary-header-${tag}`,
      fromEnvironment: `canary-expanded-${tag}`,
    };
    const all = Object.values(canary);

    // A remote that answers every request 401, quoting what it was sent.
    const received: IncomingHttpHeaders[] = [];
    const remote = createServer((req, res) => {
      received.push({ ...req.headers });
      req.resume();
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" });
      res.end(
        `invalid credentials: authorization=${req.headers.authorization ?? ""} x-api-key=${String(req.headers["x-api-key"] ?? "")}`,
      );
    });
    await new Promise<void>((resolve) => remote.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          remote.closeAllConnections();
          remote.close(() => resolve());
        }),
    );

    const home: TestHome = testHome("mcpool-canary-");
    cleanups.push(() => home.remove());
    home.env.MCPOOL_CANARY_SECRET = canary.fromEnvironment;
    home.writeConfig({
      echo: {
        command: process.execPath,
        args: [fixture("echo.mjs")],
        env: { ECHO_KEY: canary.echoKey },
      },
      crasher: {
        command: process.execPath,
        args: [fixture("crash.mjs")],
        env: { API_KEY: canary.crasherKey },
      },
      leaky: {
        command: process.execPath,
        args: [fixture("leaky.mjs")],
        env: { API_KEY: canary.leakyKey },
      },
      spawnfail: {
        command: `/nonexistent/mcpool-canary-server-${tag}`,
        env: { API_KEY: canary.missingKey },
      },
      unauthorized: {
        type: "http",
        url: `http://127.0.0.1:${(remote.address() as AddressInfo).port}/mcp`,
        headers: {
          Authorization: "Bearer ${MCPOOL_CANARY_SECRET}",
          "X-Api-Key": canary.header,
        },
      },
    });
    const daemon: RunningDaemon = await startDaemon(home);
    cleanups.push(() => daemon.stop());
    const agent: PoolClient = await client(home, "canary");
    cleanups.push(() => agent.close());

    const events: PoolEvent[] = [];
    agent.onEvent((event) => events.push(event));
    const errors: string[] = [];

    const statusOf = async (id: string) => (await agent.state()).find((s) => s.id === id);
    let settled = false;
    const deadline = Date.now() + 20_000;
    while (!settled) {
      const states = await agent.state();
      const by = Object.fromEntries(states.map((s) => [s.id, s.status]));
      settled =
        by.echo === "ready" &&
        by.crasher === "ready" &&
        ["error", "crash-loop"].includes(by.leaky ?? "") &&
        ["error", "crash-loop"].includes(by.spawnfail ?? "") &&
        ["error", "crash-loop", "auth-required"].includes(by.unauthorized ?? "");
      if (!settled && Date.now() > deadline) {
        throw new Error(
          `servers did not settle: ${JSON.stringify(states.map((s) => [s.id, s.status]))}`,
        );
      }
      if (!settled) await new Promise((resolve) => setTimeout(resolve, 25));
    }

    // Fail each of them again while subscribed, collecting what every caller is told.
    for (const id of ["leaky", "spawnfail", "unauthorized"]) {
      const failed = nextMatching<PoolEvent>(
        (listener) => agent.onEvent(listener),
        (e) => (e.type === "connect-failed" || e.type === "auth-required") && e.serverId === id,
      );
      errors.push((await rejection(agent.reconnect(id))).message);
      await failed;
    }
    const crashed = nextMatching<PoolEvent>(
      (listener) => agent.onEvent(listener),
      (e) => e.type === "close" && e.serverId === "crasher" && e.reason === "crash",
    );
    errors.push((await rejection(agent.call("crasher__crash", {}))).message);
    await crashed;
    const secretState = await agent.state({ secrets: true });
    for (const id of ["leaky", "unauthorized"]) {
      const row = secretState.find((s) => s.id === id)!.config;
      const probed = await agent.probe(row);
      expect(probed.ok).toBe(false);
      errors.push(probed.error ?? "");
    }
    errors.push(
      (await rejection(agent.call("unauthorized__anything", {}))).message,
      (await statusOf("crasher"))?.error ?? "",
    );

    // The failures happened, and the canaries were really there to leak.
    expect(received.length).toBeGreaterThan(0);
    expect(received.some((h) => h.authorization === `Bearer ${canary.fromEnvironment}`)).toBe(true);
    expect(received.some((h) => h["x-api-key"] === canary.header)).toBe(true);
    const leaky = await statusOf("leaky");
    expect(leaky?.error).toContain("fatal: upstream refused API_KEY=[redacted] (401)");
    const unauthorized = await statusOf("unauthorized");
    expect(unauthorized?.error).toMatch(/401/);
    expect(errors.join("\n")).toMatch(/ENOENT/);
    expect((await statusOf("crasher"))?.error).toMatch(/fixture crashing on purpose/);

    // What may show them does, and shows the placeholder rather than what it became.
    const withSecrets = JSON.stringify(secretState);
    expect(withSecrets).toContain(canary.leakyKey);
    expect(withSecrets).toContain(canary.header);
    expect(withSecrets).toContain("Bearer ${MCPOOL_CANARY_SECRET}");
    expect(withSecrets).not.toContain(canary.fromEnvironment);

    // A child sees its own row's env and no other row's.
    const echoPid = (await statusOf("echo"))?.pid;
    expect(echoPid).toBeGreaterThan(0);
    const echoEnv = readFileSync(`/proc/${echoPid}/environ`, "latin1");
    expect(echoEnv).toContain(`ECHO_KEY=${canary.echoKey}`);
    for (const other of [canary.leakyKey, canary.crasherKey, canary.missingKey, canary.header]) {
      expect(echoEnv).not.toContain(other);
    }

    await agent.reload();
    const cli = spawnSync(process.execPath, [cliPath, "status", "--json"], {
      env: home.env,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(cli.status).toBe(0);
    const cliHuman = spawnSync(process.execPath, [cliPath, "status"], {
      env: home.env,
      encoding: "utf8",
      timeout: 30_000,
    });
    const logs = spawnSync(process.execPath, [cliPath, "logs", "-n", "1000"], {
      env: home.env,
      encoding: "utf8",
      timeout: 30_000,
    });
    const status = await agent.status();
    const state = await agent.state();
    const tools = await agent.tools();
    expect(tools.length).toBeGreaterThan(0);
    await agent.close();
    await daemon.stop();

    const seen: Record<string, string> = {
      "mcpool status --json": cli.stdout + cli.stderr,
      "mcpool status": cliHuman.stdout + cliHuman.stderr,
      "mcpool logs": logs.stdout + logs.stderr,
      "status()": JSON.stringify(status),
      "state()": JSON.stringify(state),
      "tools()": JSON.stringify(tools),
      events: JSON.stringify(events),
      errors: errors.join("\n"),
      "daemon stderr": daemon.stderr(),
    };
    for (const file of filesUnder(home.dir)) {
      if (file.path.startsWith(join(home.dir, "config"))) continue; // the user's own mcp.json
      seen[file.path] = file.text;
    }
    expect(Object.keys(seen).some((k) => k.endsWith("mcpool.log"))).toBe(true);
    expect(events.some((e) => e.type === "connect-failed")).toBe(true);
    const leaks = Object.entries(seen).flatMap(([where, text]) =>
      all.filter((value) => text.includes(value)).map((value) => `${value} in ${where}`),
    );
    expect(leaks).toEqual([]);
    // Five servers failing four ways, three CLI runs and a daemon's stop: a minute at most.
  }, 60_000);
});
