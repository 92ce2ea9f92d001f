/**
 * A task of a child's process that ended, beside the child's new process: the row's server
 * (test/fixtures/tasks-server.mjs) counts its task ids from `task-1`, so after it is killed
 * its new process makes `task-1` again, for another host. Direct, a host whose server
 * process died hears nothing more of its task and asking about it fails; through the pool
 * the first host hears none of the new process's statuses, asking about its task fails and
 * says why, and the second host's task is its own.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { client, startDaemon, testHome, type RunningDaemon } from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { taskHost as host, type TaskHost as Host } from "../helpers/task-hosts.js";

const SERVER = { command: process.execPath, args: [fixture("tasks-server.mjs")] };
const BOUND_MS = 20_000;

const task = (h: Host, name: string, ms: number): Promise<string> =>
  h
    .request("tools/call", { name, arguments: { ms }, task: { ttl: 60_000 } })
    .then((r) => (r as { task: { taskId: string } }).task.taskId);

const pidOf = async (h: Host): Promise<number> => {
  const r = await h.request("tools/call", { name: "peek", arguments: { taskId: "none" } });
  return (JSON.parse((r as { content: { text: string }[] }).content[0]!.text) as { pid: number })
    .pid;
};

const refusal = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => "answered",
    (e: { message: string }) => e.message,
  );

describe("a task of a child's process that ended", () => {
  const home = testHome("mcpool-tasks-gone-");
  let daemon: RunningDaemon | undefined;
  const hosts: Host[] = [];
  const env = stringEnv({ ...home.env, TASK_IDS: "counted" });
  const args = ["--server", "tasks", "--socket", home.socketPath];
  const pooled = async (): Promise<Host> => {
    const { command, args: argv } = bridgeCommand(home, args, "lean");
    const h = await host(command, argv, env);
    hosts.push(h);
    return h;
  };

  beforeAll(async () => {
    home.writeConfig({ tasks: { ...SERVER, env: { TASK_IDS: "counted" } } });
    daemon = await startDaemon(home);
    await waitFor(() => existsSync(scopeSocket(home, args)), BOUND_MS, "the MCP socket");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(hosts.map((h) => h.client.close()));
    await daemon?.stop();
    home.remove();
  });

  it("keeps the new process's task of the same id from the first host, and says the first is lost", async () => {
    const [a, b] = [await pooled(), await pooled()];
    const first = await task(a, "work", 0);
    expect(first).toBe("task-1");
    expect(await a.request("tasks/get", { taskId: first })).toMatchObject({ status: "completed" });
    const before = await pidOf(a);
    process.kill(before, "SIGKILL");
    const heardBefore = a.statuses.length;
    // The pool makes the row's child again once it saw the old one end.
    const pool = await client(home);
    try {
      await waitFor(
        async () => {
          const row = (await pool.state()).find((s) => s.id === "tasks");
          return row?.status === "ready" && row.pid !== undefined && row.pid !== before;
        },
        BOUND_MS,
        "the row's child made again",
      );
    } finally {
      await pool.close();
    }

    // The row's new process counts from 1 again; its status comes before its answer.
    const second = await task(b, "early", 60_000);
    expect(second).toBe("task-1");
    expect(await pidOf(b)).not.toBe(before);
    await waitFor(
      () => b.statuses.some((s) => s.taskId === second && s.status === "working"),
      BOUND_MS,
      "the second host to hear its task working",
    );
    expect(a.statuses.slice(heardBefore)).toEqual([]);
    expect(await b.request("tasks/get", { taskId: second })).toMatchObject({ status: "working" });

    // Direct, the first host's server died with its task: asking fails, and here says why.
    expect(await refusal(a.request("tasks/get", { taskId: first }))).toMatch(
      /task "task-1" of server "tasks" is lost: the server process that ran it ended/,
    );
    expect(await a.request("tasks/list", {})).toMatchObject({ tasks: [] });
    await b.request("tasks/cancel", { taskId: second });
  }, 60_000);
});
