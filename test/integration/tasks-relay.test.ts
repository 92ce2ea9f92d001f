/**
 * MCP tasks (2025-11-25) relayed through the pool to hosts that share one connection: two SDK
 * hosts through the lean `mcpool bridge --server ID`, declaring what the pool declares (so the
 * row's own connection serves both), on a server with the SDK's own task store
 * (test/fixtures/tasks-server.mjs). Each host's tasks are its own — listed, asked about and
 * told of only to it, a status the server sent before its answer included; another host's task id is what the server says of an unknown one
 * (direct is the oracle for that answer); a connection with a live task is not reaped by
 * the row's idle rule; a host that goes has its live tasks cancelled on the server.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { client, startDaemon, testHome, type RunningDaemon } from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { taskHost as host, type TaskHost as Host } from "../helpers/task-hosts.js";

const SERVER = { command: process.execPath, args: [fixture("tasks-server.mjs")] };
/** The row's idle rule: far shorter than the tasks below. */
const IDLE_MS = 300;
const BOUND_MS = 20_000;

const work = (h: Host, ms: number, name = "work"): Promise<string> =>
  h
    .request("tools/call", { name, arguments: { ms }, task: { ttl: 60_000 } })
    .then((r) => (r as { task: { taskId: string } }).task.taskId);

const peek = async (h: Host, taskId: string): Promise<{ status: string; pid: number }> => {
  const r = await h.request("tools/call", { name: "peek", arguments: { taskId } });
  return JSON.parse((r as { content: { text: string }[] }).content[0]!.text) as never;
};

const refusal = (p: Promise<unknown>): Promise<{ code: unknown; message: string }> =>
  p.then(
    () => ({ code: "answered", message: "" }),
    (e: { code?: unknown; message: string }) => ({ code: e.code, message: e.message }),
  );

describe("MCP tasks through the pool, two hosts on one connection", () => {
  const home = testHome("mcpool-tasks-");
  let daemon: RunningDaemon | undefined;
  let direct: Host;
  const hosts: Host[] = [];
  const env = stringEnv(home.env);
  const args = ["--server", "tasks", "--socket", home.socketPath];
  const pooled = async (): Promise<Host> => {
    const { command, args: argv } = bridgeCommand(home, args, "lean");
    const h = await host(command, argv, env);
    hosts.push(h);
    return h;
  };

  beforeAll(async () => {
    home.writeConfig({ tasks: { ...SERVER, idleTimeoutMs: IDLE_MS } });
    daemon = await startDaemon(home);
    await waitFor(() => existsSync(scopeSocket(home, args)), BOUND_MS, "the MCP socket");
    direct = await host(SERVER.command, SERVER.args, env);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([direct?.client.close(), ...hosts.map((h) => h.client.close())]);
    await daemon?.stop();
    home.remove();
  });

  it("offers the server's tasks, and keeps each host's tasks its own", async () => {
    const [a, b] = [await pooled(), await pooled()];
    expect(a.client.getServerCapabilities()?.tasks).toEqual(
      direct.client.getServerCapabilities()?.tasks,
    );
    const ta = await work(a, 400);
    const tb = await work(b, 400);
    // One server process holds both: the connection is shared.
    expect((await peek(a, ta)).pid).toBe((await peek(b, tb)).pid);
    const ids = (r: Record<string, unknown>): unknown[] =>
      (r.tasks as { taskId: string }[]).map((t) => t.taskId);
    expect(ids(await a.request("tasks/list", {}))).toEqual([ta]);
    expect(ids(await b.request("tasks/list", {}))).toEqual([tb]);
    // Another host's task is one the server does not have: its own words, as direct.
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const through = await refusal(a.request(method, { taskId: tb }));
      expect(through).toEqual(await refusal(direct.request(method, { taskId: tb })));
      expect(through.code).not.toBe("answered");
    }
    const result = await a.request("tasks/result", { taskId: ta });
    expect((result.content as { text: string }[])[0]?.text).toBe("worked 400 ms");
    expect(await b.request("tasks/get", { taskId: tb })).toMatchObject({ taskId: tb });
    // Each host is told of its own task's status, and of no other's.
    await waitFor(
      () => b.statuses.some((s) => s.taskId === tb && s.status === "completed"),
      BOUND_MS,
      "the second host to hear its task completed",
    );
    expect(new Set(a.statuses.map((s) => s.taskId))).toEqual(new Set([ta]));
    expect(new Set(b.statuses.map((s) => s.taskId))).toEqual(new Set([tb]));
  }, 60_000);

  it("tells a host of a status its server sent before answering the call, as direct", async () => {
    const a = await pooled();
    const heard = async (h: Host): Promise<unknown[]> => {
      const t = await work(h, 300, "early");
      await waitFor(
        () => h.statuses.some((s) => s.taskId === t && s.status === "completed"),
        BOUND_MS,
        "the early task to complete",
      );
      return h.statuses.filter((s) => s.taskId === t).map(({ taskId: _, ...rest }) => rest);
    };
    const [through, there] = [await heard(a), await heard(direct)];
    expect(there[0]).toEqual({ status: "working", statusMessage: "started before the answer" });
    expect(through).toEqual(there);
  }, 60_000);

  it("keeps a connection with a live task from the idle rule, and lets it go after", async () => {
    const a = await pooled();
    // Ten idle bounds long: reaped meanwhile, the server would take the task with it.
    const t = await work(a, IDLE_MS * 10);
    await waitFor(
      () => a.statuses.some((s) => s.taskId === t && s.status === "completed"),
      BOUND_MS,
      "the task to complete on the server that made it",
    );
    const pool = await client(home);
    try {
      await waitFor(
        async () => (await pool.state()).find((s) => s.id === "tasks")?.status === "idle",
        BOUND_MS,
        "the server to be reaped once its task is done",
      );
    } finally {
      await pool.close();
    }
  }, 60_000);

  it("cancels the live tasks of a host that goes, and only its own", async () => {
    const [a, b] = [await pooled(), await pooled()];
    const kept = await work(a, 60_000);
    const gone = await work(b, 60_000);
    await b.client.close();
    await waitFor(
      async () => (await peek(a, gone)).status === "cancelled",
      BOUND_MS,
      "the departed host's task to be cancelled",
    );
    expect((await peek(a, kept)).status).toBe("working");
    expect(await a.request("tasks/cancel", { taskId: kept })).toMatchObject({
      status: "cancelled",
    });
  }, 60_000);
});
