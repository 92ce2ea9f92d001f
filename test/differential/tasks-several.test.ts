/**
 * Tasks over a bridge of several servers and over the whole pool. Two servers with the SDK's
 * own task store (test/fixtures/tasks-server.mjs), each counting its task ids from 1, so both
 * make `task-1`; a third offers no tasks. Direct, a host has one session per server; through
 * `mcpool bridge --servers a,b` (the full CLI's, and `--http`) and the whole pool (the lean
 * bridge, the perl relay) one session holds both. The same task session runs against each
 * server — a task-augmented call, `tasks/get` to the terminal answer, `tasks/result`, a second
 * task cancelled — and through the bridge each server's steps are what that server's host got
 * direct (its tools read back from `<server>__<tool>`), the host's ids all distinct, and the
 * host's `tasks/list` the tasks of both, each as its server lists it direct. The `tasks`
 * capability is the servers' own, and absent from a bridge whose server offers none. A status
 * a server sends of its task before it answers the call reaches the host before the answer,
 * naming the task by the host's id, as each server's host is told direct.
 */
import { existsSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { testHome } from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { httpHost, openHost } from "./entries.js";
import { connectHost, type ClientKind, type Host, type HostSpec } from "./host.js";
import { normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { type MatrixServer, nodeServer } from "./servers.js";
import { step, type Step } from "./session.js";
import { untilTerminal } from "./tasks.js";

const tasksServer = (id: string): MatrixServer =>
  nodeServer(id, [fixture("tasks-server.mjs")], { TASK_IDS: "counted", TASKS_NAME: id });
const A = tasksServer("a");
const B = tasksServer("b");
/** A server without tasks. */
const C = nodeServer("c", [fixture("echo.mjs")]);

const TASK = { ttl: 60_000 };

/** One server's task steps on `host`, its tool called `tool`, and the ids the host was given. */
async function serverTasks(host: Host, tool: string): Promise<[Step[], string[]]> {
  const steps: Step[] = [];
  const ids: string[] = [];
  const call = (ms: number): Promise<Step> =>
    step(host, "tools/call", { name: tool, arguments: { ms }, task: TASK });
  const created = await call(20);
  steps.push(created);
  const id = taskIdOf(created);
  if (id === undefined) return [steps, ids];
  ids.push(id);
  steps.push(await untilTerminal(host, id));
  steps.push(await step(host, "tasks/result", { taskId: id }));
  // A second task, long enough to be cancelled while it works.
  const second = await call(120_000);
  steps.push(second);
  const secondId = taskIdOf(second);
  if (secondId !== undefined) {
    ids.push(secondId);
    steps.push(await step(host, "tasks/cancel", { taskId: secondId }));
  }
  return [steps, ids];
}

const taskIdOf = (s: Step): string | undefined =>
  (s.result as { task?: { taskId?: string } } | undefined)?.task?.taskId;

/** `value` with each task id named by `names` (the longest first: one id may start another). */
function named<T>(value: T, names: ReadonlyMap<string, string>): T {
  let text = JSON.stringify(value);
  const ids = [...names.keys()].sort((x, y) => y.length - x.length);
  for (const id of ids) text = text.split(JSON.stringify(id)).join(JSON.stringify(names.get(id)));
  return JSON.parse(text) as T;
}

/** Each server's ids named `<server n>`, in the order the host was given them. */
const namesOf = (ids: Record<string, string[]>): Map<string, string> =>
  new Map(
    Object.entries(ids).flatMap(([server, own]) =>
      own.map((id, i): [string, string] => [id, `<${server} ${i + 1}>`]),
    ),
  );

/** A session's handshake, the steps of each server's tasks, and its `tasks/list`, named. */
interface TaskSession {
  capabilities: unknown;
  servers: Record<string, Step[]>;
  list: Step;
  /** Every id the host was given. */
  ids: string[];
}

/** The direct sessions: one host per server. */
async function direct(home: ReturnType<typeof testHome>, spec: HostSpec): Promise<TaskSession> {
  const servers: Record<string, Step[]> = {};
  const lists: Step[] = [];
  let capabilities: unknown;
  const ids: string[] = [];
  for (const server of [A, B]) {
    const host = await openHost(home, server, spec, "direct");
    try {
      capabilities = host.serverCapabilities;
      const [steps, own] = await serverTasks(host, "work");
      const list = await step(host, "tasks/list", {});
      const names = namesOf({ [server.id]: own });
      servers[server.id] = normalise(named(steps, names));
      lists.push(normalise([named(list, names)])[0]!);
      ids.push(...own);
    } finally {
      await host.close();
    }
  }
  // Direct, the host's tasks are each server's list: both, one after the other.
  const tasks = lists.flatMap((l) => (l.result as { tasks?: unknown[] } | undefined)?.tasks ?? []);
  const first = lists[0]!;
  return {
    capabilities,
    servers,
    list: { ...first, result: { ...(first.result as object), tasks } },
    ids,
  };
}

/** One host through a bridge of a and b: each server's tasks, then its `tasks/list`. */
async function pooled(host: Host): Promise<TaskSession> {
  const servers: Record<string, Step[]> = {};
  const own: Record<string, string[]> = {};
  for (const server of [A, B]) {
    const [steps, ids] = await serverTasks(host, `${server.id}__work`);
    servers[server.id] = steps;
    own[server.id] = ids;
  }
  const list = await step(host, "tasks/list", {});
  const names = namesOf(own);
  const ownNames = (steps: Step[], id: string): Step[] =>
    normalise(
      named(JSON.parse(JSON.stringify(steps).replaceAll(`"${id}__work"`, '"work"')), names),
    );
  return {
    capabilities: host.serverCapabilities,
    servers: Object.fromEntries(Object.entries(servers).map(([id, s]) => [id, ownNames(s, id)])),
    list: normalise([named(list, names)])[0]!,
    ids: Object.values(own).flat(),
  };
}

/**
 * An SDK v1 host spawning `command`: for each tool, a task-augmented call of it and the
 * statuses of its task the host was told before the call was answered, the task named by
 * its order (`<n>`).
 */
async function statusesBeforeAnswers(
  command: { command: string; args: string[] },
  env: Record<string, string>,
  tools: readonly string[],
): Promise<{ ids: string[]; told: unknown[][] }> {
  const client = new Client({ name: "differential-host", version: "1.0.0" });
  const statuses: { taskId: string }[] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    statuses.push(n.params);
  });
  await client.connect(new StdioClientTransport({ ...command, env, stderr: "ignore" }));
  const ids: string[] = [];
  const told: unknown[][] = [];
  try {
    for (const tool of tools) {
      // Working long after the answer: only the status sent before it can have come.
      const params = { name: tool, arguments: { ms: 60_000 }, task: TASK };
      const answer = await client.request({ method: "tools/call", params }, ResultSchema);
      const id = (answer as { task: { taskId: string } }).task.taskId;
      ids.push(id);
      const mine = statuses.filter((status) => status.taskId === id);
      told.push(
        normalise([{ op: "told", result: named(mine, new Map([[id, `<${ids.length}>`]])) }]),
      );
    }
  } finally {
    await client.close();
  }
  return { ids, told };
}

describe("tasks over a bridge of several servers and over the whole pool, as direct", () => {
  const home = testHome("mcpool-differential-tasks-several-");
  pooling(home, [A, B, C]);
  const spec = (client: ClientKind): HostSpec => ({
    client,
    capabilities: "none",
    root: projectOf(home, client),
  });
  const oracle = new Map<ClientKind, TaskSession>();

  beforeAll(async () => {
    for (const client of ["v1", "v2"] as const)
      oracle.set(client, await direct(home, spec(client)));
  }, 120_000);

  const env = (): Record<string, string> => stringEnv(home.env);
  const poolArgs = (): string[] => ["--socket", home.socketPath];
  const servers = (): string[] => ["--servers", "a,b", "--socket", home.socketPath];
  const entries: [string, ClientKind, () => Promise<Host>][] = [
    [
      "bridge --servers a,b",
      "v1",
      () =>
        connectHost(spec("v1"), {
          kind: "stdio",
          ...bridgeCommand(home, servers(), "sdk"),
          env: env(),
        }),
    ],
    ["bridge --servers a,b --http", "v1", () => httpHost(home, spec("v1"), servers())],
    ["the whole pool's lean bridge", "v1", () => poolHost(spec("v1"), "lean")],
    ["the whole pool's perl relay", "v1", () => poolHost(spec("v1"), "perl")],
    ["the whole pool's lean bridge", "v2", () => poolHost(spec("v2"), "lean")],
  ];

  async function poolHost(host: HostSpec, via: "lean" | "perl"): Promise<Host> {
    const at = scopeSocket(home, poolArgs());
    await waitFor(() => existsSync(at), 20_000, "the pool's MCP socket");
    return connectHost(host, {
      kind: "stdio",
      ...bridgeCommand(home, poolArgs(), via),
      env: env(),
    });
  }

  for (const [name, client, open] of entries) {
    it(`${client} through ${name}: each server's tasks, and the host's list of both`, async () => {
      const want = oracle.get(client)!;
      const host = await open();
      let got: TaskSession;
      try {
        got = await pooled(host);
      } finally {
        await host.close();
      }
      // Both servers made the same ids direct; the host through the pool told them apart.
      expect(new Set(want.ids).size).toBeLessThan(want.ids.length);
      expect(new Set(got.ids).size).toBe(4);
      expect((got.capabilities as { tasks?: unknown }).tasks).toEqual(
        (want.capabilities as { tasks?: unknown }).tasks,
      );
      expect(got.servers).toEqual(want.servers);
      expect(got.list).toEqual(want.list);
    }, 120_000);
  }

  it("tells the host a status sent before the answer by the host's id, as direct", async () => {
    const direct = [];
    for (const server of [A, B]) {
      const { told } = await statusesBeforeAnswers(server, { ...env(), ...server.env }, ["early"]);
      direct.push(...told);
    }
    const pooled = await statusesBeforeAnswers(bridgeCommand(home, servers(), "sdk"), env(), [
      "a__early",
      "b__early",
    ]);
    // Each server made the task under the same id; the host knows b's by another.
    expect(pooled.ids[1]).toBe(`${pooled.ids[0]}@b`);
    expect(direct[0]).toEqual([
      {
        op: "told",
        result: [
          expect.objectContaining({ taskId: "<1>", statusMessage: "started before the answer" }),
        ],
      },
    ]);
    // Named by order per host: direct, each server's first; through the bridge, the first and second.
    const second = (told: unknown[]): unknown =>
      JSON.parse(JSON.stringify(told).replaceAll('"<1>"', '"<2>"'));
    expect(pooled.told).toEqual([direct[0], second(direct[1]!)]);
  }, 60_000);

  it("offers no tasks through a bridge whose server offers none, as direct", async () => {
    const plain = await openHost(home, C, spec("v1"), "direct");
    const wanted = (plain.serverCapabilities as { tasks?: unknown }).tasks;
    await plain.close();
    const host = await connectHost(spec("v1"), {
      kind: "stdio",
      ...bridgeCommand(home, ["--servers", "c", "--socket", home.socketPath], "sdk"),
      env: env(),
    });
    try {
      expect(wanted).toBeUndefined();
      expect((host.serverCapabilities as { tasks?: unknown }).tasks).toBeUndefined();
    } finally {
      await host.close();
    }
  }, 60_000);
});
