/**
 * A hand-over restart moves an http row's live session to the new daemon: the new daemon's
 * client goes on in the same `Mcp-Session-Id` without a second `initialize`, so what the
 * server keeps per session survives — a row's own session, and each conversation's of a
 * `session: "conversation"` row. A session the server no longer knows (404) is opened
 * afresh, as a cold start would.
 */
import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it, type TestContext } from "vitest";
import type { PoolClient } from "mcpool-client";
import { cliPath, installedCli, startDaemon, type TestHome } from "../helpers/daemon.js";
import { testFleet, type Fleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";
import { sessionServer, type SessionServer } from "../helpers/session-server.js";

/** `remote` closed when the test ends, before its fleet is taken down (hooks run last-first). */
function closeAtEnd({ onTestFinished }: TestContext, remote: SessionServer): SessionServer {
  onTestFinished(() => remote.close());
  return remote;
}

async function count(agent: PoolClient): Promise<number> {
  return Number(await agent.call("remote__count", {}));
}

/**
 * Hands the daemon of `home` over and waits for the old one to exit. The CLI runs beside the
 * test, not blocking it: the server this test process holds answers the new daemon's dial.
 */
async function handOver(home: TestHome, oldPid: number): Promise<number> {
  const restart = await promisify(execFile)(process.execPath, [cliPath, "restart", "--json"], {
    env: home.env,
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(restart.stderr).toBe("");
  const handed = JSON.parse(restart.stdout) as { pid: number };
  await waitFor(() => !alive(oldPid), 20_000, "the old daemon to exit");
  return handed.pid;
}

/**
 * The installed code a restart starts, for a daemon of `home`: this checkout, where the new
 * daemon reads `servers` as its mcp.json (an edit the old daemon never sees).
 */
function editedOnHandOver(home: TestHome, servers: Record<string, unknown>): string {
  const edited = join(home.dir, "edited.json");
  writeFileSync(edited, JSON.stringify({ mcpServers: servers }));
  return installedCli(home, `process.env.MCPOOL_CONFIG = ${JSON.stringify(edited)};`);
}

/**
 * The installed code a restart starts, for a daemon of `home`: a build that cannot read the
 * old daemon's snapshot (its version is one it does not know), so it starts cold.
 */
function coldOnHandOver(home: TestHome): string {
  const unknownVersion = `const parse = JSON.parse;
JSON.parse = (text, reviver) => {
  const value = parse(text, reviver);
  if (Array.isArray(value?.servers) && Array.isArray(value?.marks)) {
    JSON.parse = parse;
    value.version = 999;
  }
  return value;
};
`;
  return installedCli(home, unknownVersion);
}

/** A daemon serving the session server as row `remote`, and an agent that counted once. */
async function counting(
  context: TestContext,
  fleet: Fleet,
): Promise<{
  remote: SessionServer;
  h: TestHome;
  oldPid: number;
  agent: PoolClient;
}> {
  const remote = closeAtEnd(context, await sessionServer());
  const h = fleet.home();
  h.writeConfig({ remote: { type: "http", url: remote.url } });
  const old = await fleet.daemon(h);
  const agent = await fleet.agent(h);
  expect(await count(agent)).toBe(1);
  return { remote, h, oldPid: old.pid, agent };
}

// Each test its own home, daemons and http server: they run side by side, each with a longer bound.
describe.concurrent("a hand-over restart with an http row", { timeout: 90_000 }, () => {
  it("goes on in the same session: the server's per-session count carries on", async (context) => {
    const fleet = testFleet(context);
    const { remote, h, oldPid, agent } = await counting(context, fleet);
    try {
      expect(await count(agent)).toBe(2);
      await handOver(h, oldPid);

      const after = await fleet.agent(h, "after");
      expect(await count(after)).toBe(3);
      expect(remote.opened()).toBe(1);
      expect(remote.count("initialize")).toBe(1);
      expect(remote.sessions()).toBe(1);
    } finally {
      await stopAll(daemonsFor(h.socketPath));
    }
  });

  it("moves the session's GET stream: a tools/list_changed sent after the move is heard", async (context) => {
    const fleet = testFleet(context);
    const { remote, h, oldPid } = await counting(context, fleet);
    try {
      await waitFor(() => remote.listening() === 1, 10_000, "the old daemon's GET stream");
      await handOver(h, oldPid);

      // The old daemon closed its stream before the new one opened its own: one GET more, one open.
      await waitFor(
        () => remote.count("GET") === 2 && remote.listening() === 1,
        10_000,
        "the new daemon's GET stream",
      );
      const after = await fleet.agent(h, "after");
      remote.setTools([{ name: "added", inputSchema: { type: "object" } }]);
      await remote.listChanged();
      await waitFor(
        async () =>
          (await after.status()).servers.some((s) =>
            s.tools.some((t) => t.qualified === "remote__added"),
          ),
        10_000,
        "the new daemon to list the server's tools again",
      );
      expect(remote.sessions()).toBe(1);
      expect(remote.count("initialize")).toBe(1);
    } finally {
      await stopAll(daemonsFor(h.socketPath));
    }
  });

  it("opens its GET stream again when the new daemon cannot start: list_changed is still heard", async (context) => {
    const fleet = testFleet(context);
    const remote = await sessionServer();
    closeAtEnd(context, remote);
    const h = fleet.home();
    h.writeConfig({ remote: { type: "http", url: remote.url } });
    // The installed code the restart starts: this checkout, until an "upgrade" that cannot start.
    const installed = installedCli(h);
    const old = await startDaemon(h, [], { bin: installed });
    try {
      const agent = await fleet.agent(h);
      expect(await count(agent)).toBe(1);
      await waitFor(() => remote.listening() === 1, 10_000, "the daemon's GET stream");
      writeFileSync(installed, `process.stderr.write("broken upgrade\\n"); process.exit(7);\n`);
      const restart = await promisify(execFile)(process.execPath, [cliPath, "restart"], {
        env: h.env,
        encoding: "utf8",
        timeout: 30_000,
      }).catch((error: { code?: number; stderr?: string }) => error);
      expect((restart as { code?: number }).code).toBe(1);

      // Closed for the hand-over, then opened again by the daemon that serves on.
      await waitFor(
        () => remote.count("GET") === 2 && remote.listening() === 1,
        10_000,
        "the old daemon's GET stream again",
      );
      remote.setTools([{ name: "added", inputSchema: { type: "object" } }]);
      await remote.listChanged();
      await waitFor(
        async () =>
          (await agent.status()).servers.some((s) =>
            s.tools.some((t) => t.qualified === "remote__added"),
          ),
        10_000,
        "the daemon to list the server's tools again",
      );
      expect((await agent.status()).pid).toBe(old.pid);
    } finally {
      await old.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  });

  it("moves a conversation's session too: its count carries on, no second initialize, no DELETE", async (context) => {
    const fleet = testFleet(context);
    const remote = await sessionServer();
    closeAtEnd(context, remote);
    const h = fleet.home();
    h.writeConfig({ remote: { type: "http", url: remote.url, session: "conversation" } });
    const old = await fleet.daemon(h);
    try {
      const alice = { tenant: "acme", principal: "alice", conversationId: "c1" };
      const mine = (await fleet.agent(h)).withIdentity(alice);
      expect(await mine.call("remote__count")).toBe("1");
      expect(await mine.call("remote__count")).toBe("2");
      expect(remote.opened()).toBe(1);
      await handOver(h, old.pid);

      // The same conversation through the new daemon: the same session, counting on.
      const after = (await fleet.agent(h, "after")).withIdentity(alice);
      expect(await after.call("remote__count")).toBe("3");
      expect(remote.opened()).toBe(1);
      expect(remote.count("initialize")).toBe(1);
      expect(remote.count("DELETE")).toBe(0);
      expect(remote.sessions()).toBe(1);
    } finally {
      await stopAll(daemonsFor(h.socketPath));
    }
  });

  it("leaves a conversation's session to the old daemon when the hand-over fails: no DELETE", async (context) => {
    const fleet = testFleet(context);
    const remote = await sessionServer();
    closeAtEnd(context, remote);
    const h = fleet.home();
    // A counter that dies when the new daemon lists its tools: the new daemon gives up.
    const flag = join(h.dir, "exit-on-list");
    const fragile = {
      command: process.execPath,
      args: [fixture("counter.mjs")],
      env: { COUNTER_EXIT_ON_LIST: flag },
    };
    h.writeConfig({ remote: { type: "http", url: remote.url, session: "conversation" }, fragile });
    const old = await fleet.daemon(h);
    try {
      const alice = { tenant: "acme", principal: "alice", conversationId: "c1" };
      const mine = (await fleet.agent(h)).withIdentity(alice);
      expect(await mine.call("remote__count")).toBe("1");
      await mine.call("fragile__count");
      writeFileSync(flag, "");
      const restart = await promisify(execFile)(process.execPath, [cliPath, "restart"], {
        env: h.env,
        encoding: "utf8",
        timeout: 30_000,
      }).then(
        () => ({ code: 0, stderr: "" }),
        (error: { code: number; stderr: string }) => error,
      );
      rmSync(flag);
      expect(restart.code).toBe(1);
      expect(restart.stderr).toContain("could not adopt fragile");
      // The new daemon stops once it gave up: what its stop sends is sent by then.
      await waitFor(
        () => daemonsFor(h.socketPath).every((pid) => pid === old.pid),
        20_000,
        "the new daemon to exit",
      );

      // The old daemon serves on in the same session: the new one, giving up, ended none.
      const after = (await fleet.agent(h, "after")).withIdentity(alice);
      expect(await after.call("remote__count")).toBe("2");
      expect(remote.count("DELETE")).toBe(0);
      expect(remote.count("initialize")).toBe(1);
    } finally {
      await stopAll(daemonsFor(h.socketPath));
    }
  });

  it("ends a conversation's session the new daemon did not take (its row changed): DELETE", async (context) => {
    const fleet = testFleet(context);
    const remote = await sessionServer();
    closeAtEnd(context, remote);
    const h = fleet.home();
    const row = { type: "http", url: remote.url, session: "conversation" };
    h.writeConfig({ remote: row });
    // The new daemon reads an edited copy (new headers), which the old daemon never sees.
    const installed = editedOnHandOver(h, { remote: { ...row, headers: { "X-Edited": "1" } } });
    const old = await startDaemon(h, [], { bin: installed });
    try {
      const alice = { tenant: "acme", principal: "alice", conversationId: "c1" };
      const mine = (await fleet.agent(h)).withIdentity(alice);
      expect(await mine.call("remote__count")).toBe("1");
      expect(remote.count("DELETE")).toBe(0);
      await handOver(h, old.pid);

      // The old daemon's stop ended the session no one goes on in; the new daemon opened its
      // own for the conversation (its row as edited), as its next use would.
      await waitFor(
        () => remote.count("DELETE") === 1 && remote.opened() === 2 && remote.sessions() === 1,
        10_000,
        "the old session ended by its DELETE",
      );
      const after = (await fleet.agent(h, "after")).withIdentity(alice);
      expect(await after.call("remote__count")).toBe("1");
      expect(remote.opened()).toBe(2);
    } finally {
      await old.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  });

  for (const change of ["changed", "removed"] as const) {
    it(`ends a row's own session the new daemon did not take (its row ${change}): DELETE`, async (context) => {
      const fleet = testFleet(context);
      const remote = await sessionServer();
      closeAtEnd(context, remote);
      const h = fleet.home();
      const row = { type: "http", url: remote.url };
      h.writeConfig({ remote: row });
      // Between the snapshot and the adoption the row changes (new headers) or goes.
      const edited =
        change === "changed" ? { remote: { ...row, headers: { "X-Edited": "1" } } } : {};
      const old = await startDaemon(h, [], { bin: editedOnHandOver(h, edited) });
      try {
        expect(await count(await fleet.agent(h))).toBe(1);
        expect(remote.count("DELETE")).toBe(0);
        await handOver(h, old.pid);

        // Ended by the old daemon before it answered the restart: no daemon goes on in it.
        expect(remote.count("DELETE")).toBe(1);
        if (change === "changed") {
          // The new daemon counts in a session of its own, from 1.
          expect(await count(await fleet.agent(h, "after"))).toBe(1);
          expect(remote.opened()).toBe(2);
        }
        expect(remote.sessions()).toBe(change === "changed" ? 1 : 0);
      } finally {
        await old.stop();
        await stopAll(daemonsFor(h.socketPath));
      }
    });
  }

  it("ends a row's own session when the new daemon starts cold: DELETE, and it counts anew", async (context) => {
    const fleet = testFleet(context);
    const remote = await sessionServer();
    closeAtEnd(context, remote);
    const h = fleet.home();
    h.writeConfig({ remote: { type: "http", url: remote.url } });
    const old = await startDaemon(h, [], { bin: coldOnHandOver(h) });
    try {
      expect(await count(await fleet.agent(h))).toBe(1);
      const restart = await promisify(execFile)(process.execPath, [cliPath, "restart", "--json"], {
        env: h.env,
        encoding: "utf8",
        timeout: 30_000,
      });
      expect((JSON.parse(restart.stdout) as { cold?: string }).cold).toContain("version 999");
      await waitFor(() => !alive(old.pid), 20_000, "the old daemon to exit");

      // Ended by the old daemon before it answered the restart: the new one went on in none.
      expect(remote.count("DELETE")).toBe(1);
      expect(await count(await fleet.agent(h, "after"))).toBe(1);
      expect(remote.opened()).toBe(2);
      expect(remote.sessions()).toBe(1);
    } finally {
      await old.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  });

  it("opens a new session when the server no longer knows the handed one", async (context) => {
    const fleet = testFleet(context);
    const { remote, h, oldPid } = await counting(context, fleet);
    try {
      remote.forgetAll();
      await handOver(h, oldPid);

      const after = await fleet.agent(h, "after");
      expect(await count(after)).toBe(1);
      expect(remote.opened()).toBe(2);
      expect(remote.count("initialize")).toBe(2);
    } finally {
      await stopAll(daemonsFor(h.socketPath));
    }
  });
});
