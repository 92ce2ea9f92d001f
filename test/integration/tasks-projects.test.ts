/**
 * MCP tasks (2025-11-25) of two hosts in two projects on one row whose server asks for its
 * client's roots (test/fixtures/tasks-server.mjs with TASKS_ROOTS=1): the pool runs one child
 * per project, and each child counts its task ids from 1, so both hosts' tasks are `task-1`.
 * Direct, each host spawns its own server; through `mcpool bridge --server ID` (the lean
 * bridge, the perl relay) each host must get exactly what it gets direct: its own task's
 * statuses only, its own `tasks/get`, `tasks/result` (naming its own project) and `tasks/list`
 * — and so after `mcpool restart` hands the children and the task records over.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema, ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { runCliAsync, serversReady, type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";
import { normaliseValue } from "../differential/normalise.js";

type Answer = Record<string, unknown>;
const TASK = { ttl: 60_000 };
const SERVER_ENV = { TASK_IDS: "counted", TASKS_ROOTS: "1" };
/** How long a host waits for its task's status once its gate is open, ms. */
const STATUS_BOUND_MS = 30_000;

const fleet = useFleet();

/** A host in `project` (its only root) spawning `command`, keeping its tasks' statuses. */
interface ProjectHost {
  heard: Answer[];
  step(method: string, params: Answer): Promise<Answer>;
  close(): Promise<void>;
}

async function openHost(
  target: { command: string; args: string[] },
  env: Record<string, string>,
  project: string,
): Promise<ProjectHost> {
  const client = new Client(
    { name: "project-host", version: "1.0.0" },
    { capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: [{ uri: pathToFileURL(project).href, name: "project" }],
  }));
  const heard: Answer[] = [];
  // Its tasks' statuses (the other notifications, such as a list changed after a hand-over,
  // are no part of what this compares).
  client.fallbackNotificationHandler = async (notification) => {
    if (notification.method === "notifications/tasks/status") heard.push(notification as Answer);
  };
  await client.connect(new StdioClientTransport({ ...target, env, stderr: "ignore" }));
  return {
    heard,
    // A step: the answer, or the error the host was given.
    step: (method, params) =>
      (client.request({ method, params } as never, ResultSchema) as Promise<Answer>).catch(
        (error: Error) => ({ error: error.message }),
      ),
    close: () => client.close(),
  };
}

/** Resolves once `host` has heard a terminal status of its task `taskId` (bounded). */
const statusHeard = (host: ProjectHost, taskId: string): Promise<void> =>
  waitFor(
    () =>
      host.heard.some((n) => {
        const params = n.params as { taskId?: string; status?: string } | undefined;
        return n.method === "notifications/tasks/status" && params?.taskId === taskId;
      }),
    STATUS_BOUND_MS,
    `the status of task ${taskId}`,
  );

/**
 * Two hosts' sessions, interleaved: each starts a task on `gated`, asks about it, then (after
 * `between`) each task completes in turn, its host asking about it and for its result once
 * told; last, each host's list. Each host's transcript: its steps and what it heard.
 */
async function sessions(
  a: ProjectHost,
  b: ProjectHost,
  gates: string,
  between: () => Promise<void> = async () => undefined,
): Promise<{ a: Answer[]; b: Answer[] }> {
  const steps = { a: [] as Answer[], b: [] as Answer[] };
  const hosts = { a, b };
  const ids = { a: "", b: "" };
  const run = async (who: "a" | "b", method: string, params: Answer): Promise<Answer> => {
    const answer = await hosts[who].step(method, params);
    steps[who].push({ method, params, answer });
    return answer;
  };
  for (const who of ["a", "b"] as const) {
    const made = await run(who, "tools/call", {
      name: "gated",
      arguments: { path: join(gates, who) },
      task: TASK,
    });
    ids[who] = (made as { task?: { taskId?: string } }).task?.taskId ?? "";
  }
  await between();
  // Asked about after the hand-over: each host claims its own task again.
  for (const who of ["a", "b"] as const) await run(who, "tasks/get", { taskId: ids[who] });
  for (const who of ["a", "b"] as const) {
    writeFileSync(join(gates, who), "open");
    await statusHeard(hosts[who], ids[who]);
    await run("a", "tasks/get", { taskId: ids.a });
    await run("b", "tasks/get", { taskId: ids.b });
    await run(who, "tasks/result", { taskId: ids[who] });
  }
  for (const who of ["a", "b"] as const) await run(who, "tasks/list", {});
  const transcript = (who: "a" | "b"): Answer[] => {
    const text = JSON.stringify([...steps[who], { heard: hosts[who].heard }]);
    return normaliseValue(JSON.parse(text.split(gates).join("<gates>"))) as Answer[];
  };
  return { a: transcript("a"), b: transcript("b") };
}

/** A fresh folder under `home` for `name`. */
function folder(home: TestHome, name: string): string {
  const dir = join(home.dir, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The two sessions direct: each host spawns its own server. */
async function direct(home: TestHome, projects: { a: string; b: string }) {
  const env = { ...stringEnv(process.env as never), ...SERVER_ENV };
  const target = { command: process.execPath, args: [fixture("tasks-server.mjs")] };
  const a = await openHost(target, env, projects.a);
  const b = await openHost(target, env, projects.b);
  try {
    return await sessions(a, b, folder(home, "gates-direct"));
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

describe("tasks of two projects' hosts on one row, as each gets them direct", () => {
  const cases = [
    ["lean", false],
    ["perl", false],
    ["lean", true],
  ] as const;
  for (const [via, restart] of cases) {
    const across = restart ? " across mcpool restart" : "";
    it(`gives each ${via} host only its own task's statuses and answers${across}`, async () => {
      const home = fleet.home(`mcpool-tasks-projects-${via}-`);
      const projects = { a: folder(home, "project-a"), b: folder(home, "project-b") };
      const want = await direct(home, projects);
      // The oracle's own check: both servers made the same id, each host heard one status.
      expect(JSON.stringify(want.a)).toContain('"taskId":"task-1"');
      expect(JSON.stringify(want.b)).toContain('"taskId":"task-1"');

      home.writeConfig({
        t: { command: process.execPath, args: [fixture("tasks-server.mjs")], env: SERVER_ENV },
      });
      await fleet.daemon(home);
      await serversReady(home);
      const args = ["--server", "t", "--socket", home.socketPath];
      await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "t's MCP socket");
      const target = bridgeCommand(home, args, via);
      const env = stringEnv(home.env);
      const a = await openHost(target, env, projects.a);
      const b = await openHost(target, env, projects.b);
      try {
        const handOver = async (): Promise<void> => {
          if (!restart) return;
          const done = await runCliAsync(home, "restart", "--json");
          expect(done.stderr).toBe("");
          const adopted = (JSON.parse(done.stdout) as { adopted: string[] }).adopted;
          expect(adopted).toContain("t");
        };
        const got = await sessions(a, b, folder(home, "gates-pooled"), handOver);
        expect(got.a).toEqual(want.a);
        expect(got.b).toEqual(want.b);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await stopAll(daemonsFor(home.socketPath));
      }
    }, 180_000);
  }
});
