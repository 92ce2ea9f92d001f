/**
 * MCP tasks (2025-11-25) across `mcpool restart`: the server's child moves to the new daemon
 * with its tasks, and so do the pool's records of whose task is whose. A host through the
 * SDK bridge (its session carries on across the restart) asks about its older tasks as
 * before — a live one and a finished one, on the same server process — and lists them; a
 * task it did not make is still not its own. A host of the MCP socket, whose session there
 * ends as the daemon hands over, has its live task go on in the server as well; a client of
 * the client library that names no owner finds its task again once it reconnected, and an
 * MCP-socket host's live tasks stay live through restarts with no call in flight. A host
 * that asks while the new daemon is still adopting is never told "not found"; a status the
 * server sent of a moved task before its host asked reaches the host; a connection that asks
 * then and closes claims nothing of its host's; a stale release of a name ends no moved
 * task; and a host that goes before its call is answered leaves no task. A host through the
 * lean bridge or the perl relay, whose session the new daemon makes anew when the entry dials
 * again, asks about its older task as it does direct: the entry names its host the same on
 * every connection, and a host through another entry still does not own it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bridgeCommand, scopeSocket, stringEnv, type BridgePath } from "../helpers/bridge.js";
import { installedCli, runCliAsync, startDaemon, type TestHome } from "../helpers/daemon.js";
import { testFleet, type Fleet } from "../helpers/fleet.js";
import { daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

/** What the pool declares to a server: the row's own connection serves the host. */
const AS_THE_POOL = { sampling: {}, elicitation: { form: {} } };
const BOUND_MS = 20_000;
/** What the new daemon logs as a host's request first waits for the adoption of moved tasks. */
const WAITS_FOR_ADOPTION = "request about its moved tasks waits for the adoption to conclude";
/** Restarts in a row for an MCP-socket host's tasks: each one's session end is another chance to cancel. */
const RESTARTS = 5;

type Answer = Record<string, unknown>;

interface Host {
  client: Client;
  /** The tasks it heard completed. */
  done: Set<string>;
  ask(method: string, params: Answer): Promise<Answer>;
  work(ms: number): Promise<string>;
  peek(taskId: string): Promise<{ status: string; pid: number }>;
}

async function host(h: TestHome, via: BridgePath): Promise<Host> {
  const client = new Client(
    { name: "tasks-host", version: "1.0.0" },
    { capabilities: AS_THE_POOL },
  );
  const done = new Set<string>();
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    if (n.params.status === "completed") done.add(n.params.taskId);
  });
  const ask = (method: string, params: Answer): Promise<Answer> =>
    client.request({ method, params } as never, ResultSchema) as Promise<Answer>;
  const { command, args } = bridgeCommand(h, ["--server", "tasks"], via);
  await client.connect(
    new StdioClientTransport({ command, args, env: stringEnv(h.env), stderr: "ignore" }),
  );
  return {
    client,
    done,
    ask,
    work: async (ms) => {
      const r = await ask("tools/call", { name: "work", arguments: { ms }, task: { ttl: 60_000 } });
      return (r as { task: { taskId: string } }).task.taskId;
    },
    peek: async (taskId) => {
      const r = await ask("tools/call", { name: "peek", arguments: { taskId } });
      return JSON.parse((r as { content: { text: string }[] }).content[0]!.text) as never;
    },
  };
}

/** The tasks fixture serving Streamable HTTP on loopback: its url, and its stop. */
async function tasksOverHttp(): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [fixture("tasks-server.mjs")], {
    env: { ...process.env, TASKS_HTTP: "1" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  const [line] = (await Promise.race([
    once(child.stdout, "data"),
    exited.then(() => [Buffer.from("")]),
  ])) as Buffer[];
  const url = /^listening (\S+)/.exec(String(line))?.[1];
  const stop = async (): Promise<void> => {
    child.stdin.end();
    await exited;
  };
  if (url === undefined) {
    await stop();
    throw new Error(`the tasks fixture did not serve http: ${String(line)}`);
  }
  return { url, stop };
}

/** A live task of the client library's (naming no owner: it goes by the client's own name). */
async function libTask(lib: PoolClient): Promise<string> {
  const made = await lib.call("tasks__work", { ms: 120_000 }, { raw: true, task: { ttl: 60_000 } });
  return (made as unknown as { task: { taskId: string } }).task.taskId;
}

/**
 * What a session direct to the tasks fixture is answered to `tasks/get` of its own live task:
 * the oracle of the answer's fields and status.
 */
async function directTaskGet(): Promise<{ fields: string[]; status: unknown }> {
  const client = new Client({ name: "direct", version: "1.0.0" }, { capabilities: AS_THE_POOL });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [fixture("tasks-server.mjs")] }),
  );
  try {
    const ask = (method: string, params: Answer): Promise<Answer> =>
      client.request({ method, params } as never, ResultSchema) as Promise<Answer>;
    const made = await ask("tools/call", {
      name: "work",
      arguments: { ms: 120_000 },
      task: { ttl: 60_000 },
    });
    const taskId = (made as { task: { taskId: string } }).task.taskId;
    const got = await ask("tasks/get", { taskId });
    await ask("tasks/cancel", { taskId });
    return { fields: Object.keys(got).sort(), status: got.status };
  } finally {
    await client.close();
  }
}

/** A daemon for `h`, once the tasks server's MCP socket is there. */
async function servedWithSocket(fleet: Fleet, h: TestHome): Promise<void> {
  await fleet.daemon(h);
  await waitFor(
    () => existsSync(scopeSocket(h, ["--server", "tasks"])),
    BOUND_MS,
    "the MCP socket",
  );
}

/**
 * A home whose second row the new daemon lists again only once the test opens `relist`: until
 * then its adoption is not concluded, while it already serves the socket.
 */
function gatedAdoption(fleet: Fleet, prefix: string): { h: TestHome; relist: string } {
  const h = fleet.home(prefix);
  const relist = join(h.dir, "relist");
  h.writeConfig({
    tasks: { command: process.execPath, args: [fixture("tasks-server.mjs")] },
    slow: { command: process.execPath, args: [fixture("gate.mjs")], env: { GATE_RELIST: relist } },
  });
  return { h, relist };
}

// Each test its own home and daemon: they run side by side, each with a longer bound, and
// the CLI runs without blocking the worker's event loop.
describe.concurrent("tasks across a hand-over restart", { timeout: 90_000 }, () => {
  it("keeps a host's live task on an http row whose session moved", async (context) => {
    const fleet = testFleet(context);
    const remote = await tasksOverHttp();
    const h = fleet.home("mcpool-tasks-handover-http-");
    h.writeConfig({ tasks: { type: "http", url: remote.url } });
    let sdk: Host | undefined;
    try {
      await fleet.daemon(h);
      sdk = await host(h, "sdk");
      const { ask, work, peek } = sdk;
      const live = await work(120_000);
      expect((await peek(live)).status).toBe("working");
      // Direct, the session that made the task holds it: the pool's moved session is that one.
      expect(await ask("tasks/get", { taskId: live })).toMatchObject({ status: "working" });

      const restart = await runCliAsync(h, "restart", "--json");
      expect(restart.stderr).toBe("");
      expect(restart.code).toBe(0);

      // The same host session, carried on to the new daemon by its bridge: its task too.
      expect(await ask("tasks/get", { taskId: live })).toMatchObject({
        taskId: live,
        status: "working",
      });
      expect(await ask("tasks/cancel", { taskId: live })).toMatchObject({ status: "cancelled" });
      expect((await peek(live)).status).toBe("cancelled");
    } finally {
      await sdk?.client.close().catch(() => undefined);
      await stopAll(daemonsFor(h.socketPath));
      await remote.stop();
    }
  }, 90_000);

  it("lets a host ask about and list its older tasks on the child that moved", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-tasks-handover-");
    h.writeConfig({ tasks: { command: process.execPath, args: [fixture("tasks-server.mjs")] } });
    const hosts: Host[] = [];
    try {
      await servedWithSocket(fleet, h);
      const sdk = await host(h, "sdk");
      hosts.push(sdk);
      // A host of the MCP socket: its session there ends as the daemon hands over.
      const lean = await host(h, "lean");
      hosts.push(lean);
      const { ask, work, peek } = sdk;
      const live = await work(120_000);
      const finished = await work(1);
      const leans = await lean.work(120_000);
      // The client library, naming no owner: its tasks go by the client's own name.
      const lib = await fleet.agent(h, "lib");
      const libs = await libTask(lib);
      await waitFor(() => sdk.done.has(finished), BOUND_MS, "the short task to complete");
      const before = await peek(live);
      expect(before.status).toBe("working");

      const restart = await runCliAsync(h, "restart", "--json");
      expect(restart.stderr).toBe("");
      expect(restart.code).toBe(0);
      expect((JSON.parse(restart.stdout) as { adopted: string[] }).adopted).toEqual(["tasks"]);

      // The same host session, carried on to the new daemon by its bridge.
      expect(await peek(live)).toEqual(before);
      // The socket's host's task lives on too: no session's end during the hand-over ends it.
      expect((await peek(leans)).status).toBe("working");
      // The client library, reconnected to the new daemon, finds its task and ends it.
      expect(await lib.tasks.request("tasks", "tasks/get", { taskId: libs })).toMatchObject({
        taskId: libs,
        status: "working",
      });
      expect(await lib.tasks.request("tasks", "tasks/cancel", { taskId: libs })).toMatchObject({
        status: "cancelled",
      });
      expect(await ask("tasks/get", { taskId: live })).toMatchObject({
        taskId: live,
        status: "working",
      });
      const result = await ask("tasks/result", { taskId: finished });
      expect((result.content as { text: string }[])[0]?.text).toBe("worked 1 ms");
      const listed = await ask("tasks/list", {});
      const ids = (listed.tasks as { taskId: string }[]).map((t) => t.taskId).sort();
      expect(ids).toEqual([live, finished].sort());
      // Another caller of the new daemon, naming no host of its own, does not own it.
      const other = await fleet.agent(h, "other");
      await expect(other.tasks.request("tasks", "tasks/get", { taskId: live })).rejects.toThrow(
        /not found/i,
      );
      expect(await ask("tasks/cancel", { taskId: live })).toMatchObject({ status: "cancelled" });
      expect((await peek(live)).status).toBe("cancelled");
    } finally {
      await Promise.allSettled(hosts.map((one) => one.client.close()));
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);

  for (const via of ["lean", "perl"] as const) {
    it(`answers a host through the ${via} entry about its older task after the restart, as direct`, async (context) => {
      const fleet = testFleet(context);
      const expected = await directTaskGet();
      expect(expected.status).toBe("working");
      const h = fleet.home(`mcpool-tasks-handover-${via}-`);
      h.writeConfig({ tasks: { command: process.execPath, args: [fixture("tasks-server.mjs")] } });
      const hosts: Host[] = [];
      try {
        await servedWithSocket(fleet, h);
        const entry = await host(h, via);
        hosts.push(entry);
        const live = await entry.work(120_000);
        const restart = await runCliAsync(h, "restart", "--json");
        expect(restart.stderr).toBe("");
        expect((JSON.parse(restart.stdout) as { adopted: string[] }).adopted).toEqual(["tasks"]);

        // The entry dialled the new daemon and gave its host's name again: the task is its own.
        const got = await entry.ask("tasks/get", { taskId: live });
        expect({ fields: Object.keys(got).sort(), status: got.status }).toEqual(expected);
        expect(got.taskId).toBe(live);
        const listed = await entry.ask("tasks/list", {});
        expect((listed.tasks as { taskId: string }[]).map((t) => t.taskId)).toEqual([live]);
        // A host through another entry of the same kind, as another session direct: not its task.
        const other = await host(h, via);
        hosts.push(other);
        await expect(other.ask("tasks/get", { taskId: live })).rejects.toThrow(/not found/i);
        expect(await entry.ask("tasks/cancel", { taskId: live })).toMatchObject({
          status: "cancelled",
        });
        expect((await entry.peek(live)).status).toBe("cancelled");
      } finally {
        await Promise.allSettled(hosts.map((one) => one.client.close()));
        await stopAll(daemonsFor(h.socketPath));
      }
    }, 90_000);
  }

  it("tells a host of its moved task's status that came before the host asked about it", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-tasks-handover-missed-");
    h.writeConfig({ tasks: { command: process.execPath, args: [fixture("tasks-server.mjs")] } });
    let sdk: Host | undefined;
    try {
      await fleet.daemon(h);
      sdk = await host(h, "sdk");
      const { ask, peek } = sdk;
      const finish = join(h.dir, "finish");
      const made = await ask("tools/call", {
        name: "gated",
        arguments: { path: finish },
        task: { ttl: 60_000 },
      });
      const taskId = (made as { task: { taskId: string } }).task.taskId;

      const restart = await runCliAsync(h, "restart", "--json");
      expect(restart.code).toBe(0);
      expect((JSON.parse(restart.stdout) as { adopted: string[] }).adopted).toEqual(["tasks"]);
      // The task completes now, on the moved child, before its host asks the new daemon about
      // it: the server says so on the pipe ahead of its answer to this peek.
      writeFileSync(finish, "");
      await waitFor(
        async () => (await peek(taskId)).status === "completed",
        BOUND_MS,
        "the task to complete",
      );
      expect(sdk.done.has(taskId)).toBe(false);
      // The host's first question claims its task, and it hears what it missed.
      expect(await ask("tasks/get", { taskId })).toMatchObject({ status: "completed" });
      await waitFor(() => sdk!.done.has(taskId), BOUND_MS, "the completed status notification");
    } finally {
      await sdk?.client.close().catch(() => undefined);
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);

  it("lets a stale tasks/release for a host's name leave that host's moved tasks working", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-tasks-handover-release-");
    h.writeConfig({ tasks: { command: process.execPath, args: [fixture("tasks-server.mjs")] } });
    try {
      await fleet.daemon(h);
      const lib = await fleet.agent(h, "lib");
      const taskId = await libTask(lib);
      const restart = await runCliAsync(h, "restart", "--json");
      expect((JSON.parse(restart.stdout) as { adopted: string[] }).adopted).toEqual(["tasks"]);
      // A release for the host's name, from a connection that carried a host of that name
      // once (queued before the hand-over), reaches the new daemon: it is that connection's
      // own tasks it releases, and it has none.
      const stale = await fleet.agent(h, "stale");
      await stale.tasks.release(lib.tasks.owner);
      expect(await lib.tasks.request("tasks", "tasks/get", { taskId })).toMatchObject({
        taskId,
        status: "working",
      });
    } finally {
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);

  it("cancels at once the task of a host that went before the server answered its call", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-tasks-gone-host-");
    h.writeConfig({ tasks: { command: process.execPath, args: [fixture("tasks-server.mjs")] } });
    try {
      await fleet.daemon(h);
      const answer = join(h.dir, "answer");
      const gone = await fleet.agent(h, "gone");
      const call = gone.call("tasks__late", { path: answer }, { raw: true, task: { ttl: 60_000 } });
      call.catch(() => undefined);
      await waitFor(
        () => existsSync(`${answer}.waiting`),
        BOUND_MS,
        "the call to reach the server",
      );
      await gone.close();
      // The server answers the call now, its task made: no host is left to own it.
      writeFileSync(answer, "");
      const other = await fleet.agent(h, "other");
      await waitFor(() => existsSync(`${answer}.made`), BOUND_MS, "the server to make the task");
      const taskId = readFileSync(`${answer}.made`, "utf8");
      const status = async (): Promise<string> => {
        const r = await other.call("tasks__peek", { taskId }, { raw: true });
        const text = (r as unknown as { content: { text: string }[] }).content[0]!.text;
        return (JSON.parse(text) as { status: string }).status;
      };
      // Direct, the host's end ends the server and its work: through the pool, its task is
      // cancelled on the server (which offers cancel) once the answer names it.
      await waitFor(async () => (await status()) === "cancelled", BOUND_MS, "the task cancelled");
    } finally {
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);

  it("answers a host's tasks/get while the new daemon is still adopting: never 'not found'", async (context) => {
    const fleet = testFleet(context);
    const { h, relist } = gatedAdoption(fleet, "mcpool-tasks-handover-window-");
    let sdk: Host | undefined;
    try {
      const old = await fleet.daemon(h);
      sdk = await host(h, "sdk");
      const { ask, work } = sdk;
      const live = await work(120_000);
      expect(await ask("tasks/get", { taskId: live })).toMatchObject({ status: "working" });

      const restart = runCliAsync(h, "restart", "--json");
      let restarted = false;
      void restart.finally(() => (restarted = true));
      // The host follows its task all along, one answer after the other, until the restart returns.
      const answers: string[] = [];
      const following = (async () => {
        while (!restarted) {
          const answer = await ask("tasks/get", { taskId: live }).then(
            (r) => String(r.status),
            (error: unknown) => `error: ${(error as Error).message}`,
          );
          answers.push(answer);
        }
      })();
      await waitFor(() => existsSync(`${relist}.waiting`), BOUND_MS, "the new daemon to adopt");
      // The new daemon serves, its adoption not concluded, and the host's bridge is back on it.
      await waitFor(
        async () => {
          const status = await runCliAsync(h, "status", "--json");
          const seen = JSON.parse(status.stdout || "{}") as { pid?: number; clients?: number };
          return seen.pid !== undefined && seen.pid !== old.pid && (seen.clients ?? 0) >= 2;
        },
        BOUND_MS,
        "the host's bridge to reach the new daemon",
      );
      // The new daemon says a host's request waits for the adoption the gate holds: the
      // host's one question under way is at the new daemon, before it has its records.
      await waitFor(
        () => old.stderr().includes(WAITS_FOR_ADOPTION),
        BOUND_MS,
        "the host's tasks/get to wait for the adoption",
      );
      const waited = answers.length;
      writeFileSync(relist, "");
      const done = await restart;
      expect(done.stderr).toBe("");
      expect((JSON.parse(done.stdout) as { adopted: string[] }).adopted.sort()).toEqual([
        "slow",
        "tasks",
      ]);
      await following;
      // The question that waited is answered from the records the adoption took up.
      expect(answers[waited]).toBe("working");
      expect(answers.filter((a) => /not found/i.test(a))).toEqual([]);
      for (const answer of answers)
        expect(answer).toMatch(/^working$|the daemon went away during this request/);
      expect(await ask("tasks/get", { taskId: live })).toMatchObject({ status: "working" });
    } finally {
      await sdk?.client.close().catch(() => undefined);
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);

  it("leaves a moved task its host's by name when a connection that asked during the adoption closes", async (context) => {
    const fleet = testFleet(context);
    const { h, relist } = gatedAdoption(fleet, "mcpool-tasks-handover-gone-");
    try {
      const old = await fleet.daemon(h);
      // The client library's tasks go by its owner name: another connection naming it finds them.
      const lib = await fleet.agent(h, "lib");
      const libs = await libTask(lib);
      const restart = runCliAsync(h, "restart", "--json");
      await waitFor(() => existsSync(`${relist}.waiting`), BOUND_MS, "the new daemon to adopt");
      await waitFor(
        async () => {
          const status = await runCliAsync(h, "status", "--json");
          const seen = JSON.parse(status.stdout || "{}") as { pid?: number };
          return seen.pid !== undefined && seen.pid !== old.pid;
        },
        BOUND_MS,
        "the new daemon to serve",
      );
      // The library's own connection is the new daemon's one client: the count below is exact.
      expect((await lib.status()).pid).not.toBe(old.pid);
      await waitFor(async () => (await lib.status()).clients === 1, BOUND_MS, "one client");
      // A connection naming the same owner asks about the task while it is not yet taken up, and
      // closes with its question under way: the daemon read the question before the status
      // asked after it on the same connection, and before the close.
      const early = await fleet.agent(h, "early");
      const asked = early.tasks
        .request("tasks", "tasks/get", { taskId: libs }, { taskOwner: lib.tasks.owner })
        .catch(() => "");
      expect((await early.status()).pid).not.toBe(old.pid);
      await early.close();
      await asked;
      // The client's close is done on its side only: the daemon sees it when it reads the end
      // of the socket, in no set order with the gated child's answer. Seen after the adoption,
      // it is a host that asked about its task, was given it, then went (and its task with it).
      await waitFor(async () => (await lib.status()).clients === 1, BOUND_MS, "the close seen");
      writeFileSync(relist, "");
      const done = await restart;
      expect(done.stderr).toBe("");
      expect(done.code).toBe(0);
      // The closed connection claimed nothing: the host's own connection finds its task.
      expect(await lib.tasks.request("tasks", "tasks/get", { taskId: libs })).toMatchObject({
        taskId: libs,
        status: "working",
      });
      expect(await lib.tasks.request("tasks", "tasks/cancel", { taskId: libs })).toMatchObject({
        status: "cancelled",
      });
    } finally {
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);

  it("keeps a host's live task when the new daemon cannot start: the old one serves it on", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-tasks-handover-failed-");
    h.writeConfig({ tasks: { command: process.execPath, args: [fixture("tasks-server.mjs")] } });
    // The installed code the restart starts: this checkout, until an "upgrade" that cannot start.
    const installed = installedCli(h);
    const old = await startDaemon(h, [], { bin: installed });
    let sdk: Host | undefined;
    try {
      sdk = await host(h, "sdk");
      const { ask, work, peek } = sdk;
      const live = await work(120_000);
      const before = await peek(live);
      expect(before.status).toBe("working");

      writeFileSync(installed, `process.stderr.write("broken upgrade\\n"); process.exit(7);\n`);
      const restart = await runCliAsync(h, "restart");
      expect(restart.stderr).toContain("did not take over");
      expect(restart.code).toBe(1);

      // The same host session, carried on by its bridge to the daemon that serves on: its
      // task goes on in the same server process, and is still its own.
      expect(await peek(live)).toEqual(before);
      expect(await ask("tasks/get", { taskId: live })).toMatchObject({
        taskId: live,
        status: "working",
      });
      expect(await ask("tasks/cancel", { taskId: live })).toMatchObject({ status: "cancelled" });
      expect((await peek(live)).status).toBe("cancelled");
      expect((await runCliAsync(h, "status", "--json")).stdout).toContain(`"pid": ${old.pid}`);
    } finally {
      await sdk?.client.close().catch(() => undefined);
      await old.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);
});

// Alone, not beside the others: beside them, on a machine at load 37-60, a task of the
// socket's host was twice found absent from the server after a restart, which is not
// explained yet (docs/status.md).
describe("tasks of an MCP-socket host across restarts", () => {
  it("keeps an MCP-socket host's live tasks through restarts with no call in flight", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-tasks-handover-socket-");
    h.writeConfig({ tasks: { command: process.execPath, args: [fixture("tasks-server.mjs")] } });
    let lean: Host | undefined;
    try {
      await servedWithSocket(fleet, h);
      lean = await host(h, "lean");
      const live: string[] = [];
      for (let restart = 0; restart < RESTARTS; restart++) {
        live.push(await lean.work(120_000));
        // Nothing in flight: the hand-over ends the socket's session with no call to wait on.
        const { code, stderr } = await runCliAsync(h, "restart");
        expect({ restart, code, stderr }).toEqual({ restart, code: 0, stderr: "" });
        // The old daemon sent nothing as that session ended: no task of it was cancelled.
        for (const taskId of live) expect((await lean.peek(taskId)).status).toBe("working");
      }
    } finally {
      await lean?.client.close().catch(() => undefined);
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 180_000);
});
