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
import { afterEach, describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { cliPath, installedCli, startDaemon, type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";
import { sessionServer, type SessionServer } from "../helpers/session-server.js";

const fleet = useFleet();
const servers: SessionServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function count(agent: PoolClient): Promise<number> {
  return Number(await agent.call("remote__count", {}));
}

/**
 * Hands the daemon of `home` over and waits for the old one to exit. The CLI runs beside the
 * test, not blocking it: the server this test process holds answers the new daemon's dial.
 */
async function handOver(home: TestHome, oldPid: number): Promise<{ pid: number; cold?: string }> {
  const restart = await promisify(execFile)(process.execPath, [cliPath, "restart", "--json"], {
    env: home.env,
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(restart.stderr).toBe("");
  const handed = JSON.parse(restart.stdout) as { pid: number; cold?: string };
  await waitFor(() => !alive(oldPid), 20_000, "the old daemon to exit");
  return handed;
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
  return installedCli(
    home,
    `const parse = JSON.parse;
JSON.parse = (text, reviver) => {
  const value = parse(text, reviver);
  if (Array.isArray(value?.servers) && Array.isArray(value?.marks)) {
    JSON.parse = parse;
    value.version = 999;
  }
  return value;
};`,
  );
}

/**
 * A home whose mcp.json serves the session server as its one row, `remote`: `row` (the
 * server's url added), which it gives back.
 */
async function servingRemote(
  row: Record<string, unknown> = {},
): Promise<{ remote: SessionServer; h: TestHome; row: Record<string, unknown> }> {
  const remote = await sessionServer();
  servers.push(remote);
  const h = fleet.home();
  const served = { type: "http", url: remote.url, ...row };
  h.writeConfig({ remote: served });
  return { remote, h, row: served };
}

/** A daemon serving the session server as row `remote`, and an agent that counted once. */
async function counting(): Promise<{
  remote: SessionServer;
  h: TestHome;
  oldPid: number;
  agent: PoolClient;
}> {
  const { remote, h } = await servingRemote();
  const old = await fleet.daemon(h);
  const agent = await fleet.agent(h);
  expect(await count(agent)).toBe(1);
  return { remote, h, oldPid: old.pid, agent };
}

describe("a hand-over restart with an http row", () => {
  it("goes on in the same session: the server's per-session count carries on", async () => {
    const { remote, h, oldPid, agent } = await counting();
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

  it("moves the session's GET stream: a tools/list_changed sent after the move is heard", async () => {
    const { remote, h, oldPid } = await counting();
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

  it("opens its GET stream again when the new daemon cannot start: list_changed is still heard", async () => {
    const { remote, h } = await servingRemote();
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

  it("moves a conversation's session too: its count carries on, no second initialize, no DELETE", async () => {
    const { remote, h } = await servingRemote({ session: "conversation" });
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

  it("leaves a conversation's session to the old daemon when the hand-over fails: no DELETE", async () => {
    const remote = await sessionServer();
    servers.push(remote);
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

  it("ends a conversation's session the new daemon did not take (its row changed): DELETE", async () => {
    const { remote, h, row } = await servingRemote({ session: "conversation" });
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

  /**
   * Between the snapshot and the adoption the row changes (new headers) or goes, or the new
   * daemon cannot read the snapshot at all and starts cold: the row's session is not taken.
   */
  const untaken = [
    {
      title: "the new daemon did not take (its row changed): DELETE",
      installed: (h: TestHome, row: Record<string, unknown>) =>
        editedOnHandOver(h, { remote: { ...row, headers: { "X-Edited": "1" } } }),
      countsAnew: true,
    },
    {
      title: "the new daemon did not take (its row removed): DELETE",
      installed: (h: TestHome) => editedOnHandOver(h, {}),
      countsAnew: false,
    },
    {
      title: "when the new daemon starts cold: DELETE, and it counts anew",
      installed: coldOnHandOver,
      cold: "version 999",
      countsAnew: true,
    },
  ];
  for (const { title, installed, cold, countsAnew } of untaken) {
    it(`ends a row's own session ${title}`, async () => {
      const { remote, h, row } = await servingRemote();
      const old = await startDaemon(h, [], { bin: installed(h, row) });
      try {
        expect(await count(await fleet.agent(h))).toBe(1);
        expect(remote.count("DELETE")).toBe(0);
        const handed = await handOver(h, old.pid);
        if (cold !== undefined) expect(handed.cold).toContain(cold);

        // Ended by the old daemon before it answered the restart: no daemon goes on in it.
        expect(remote.count("DELETE")).toBe(1);
        if (countsAnew) {
          // The new daemon counts in a session of its own, from 1.
          expect(await count(await fleet.agent(h, "after"))).toBe(1);
          expect(remote.opened()).toBe(2);
        }
        expect(remote.sessions()).toBe(countsAnew ? 1 : 0);
      } finally {
        await old.stop();
        await stopAll(daemonsFor(h.socketPath));
      }
    });
  }

  it("opens a new session when the server no longer knows the handed one", async () => {
    const { remote, h, oldPid } = await counting();
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
