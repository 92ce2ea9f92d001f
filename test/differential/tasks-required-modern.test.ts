/**
 * A 2026-07-28 host calling a 2025-11-25 server's tool that requires a task. Its era has no
 * task-augmented call (a server there decides on its own whether a request runs as a task, and
 * answers a client that declared no tasks with the result), so the pool runs the task for it.
 *
 * The pool holds server-everything and the tasks fixture (test/fixtures/tasks-server.mjs), both
 * only 2025-11-25, beside a 2026-07-28-only server, so a dual-era host (SDK v2 on `auto`) of the
 * whole pool is served 2026-07-28 (mixed-era-pool.test.ts). Direct, a 2025-11-25 host (SDK v1)
 * calls `simulate-research-query` with a task, follows it and fetches `tasks/result`; through
 * the pool the modern host calls it plainly and gets that result, as content; asked to
 * clarify (`ambiguous`), the task's question reaches the host as its call's, and its answer
 * shapes the report. The host's progress token stays the task's: the server's progress
 * reaches it. A host that cancels its
 * call, or goes, has the task cancelled upstream: the server's own store says so (`peek`).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { beforeAll, describe, expect, it } from "vitest";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { testHome } from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { openHost } from "./entries.js";
import { compare, normalise, withoutRelatedTask } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { matrixServers, type MatrixServer } from "./servers.js";
import { step, type Step } from "./session.js";
import { untilTerminal } from "./tasks.js";

const tasks: MatrixServer = {
  id: "tasks",
  command: process.execPath,
  args: [fixture("tasks-server.mjs")],
  env: { TASK_IDS: "counted", TASKS_NAME: "tasks" },
  script: {},
};
const RESEARCH = "simulate-research-query";
/** How long a task's work may take to show cancelled on the server once the host withdrew. */
const CANCEL_BOUND_MS = 20_000;

describe("a 2026-07-28 host calling a 2025-11-25 tool that requires a task", () => {
  const home = testHome("mcpool-differential-required-");
  const servers = matrixServers(home.dir);
  const everything = servers.find((s) => s.id === "everything")!;
  const modern = servers.find((s) => s.id === "modern")!;
  const args = everything.script.fixed![RESEARCH]!;
  let direct: Step[] = [];

  pooling(home, [everything, modern, tasks]);

  beforeAll(async () => {
    const spec = { client: "v1" as const, capabilities: "none" as const, root: "" };
    spec.root = projectOf(home, "v1");
    const host = await openHost(home, everything, spec, "direct");
    try {
      const created = await step(host, "tools/call", {
        name: RESEARCH,
        arguments: args,
        task: { ttl: 60_000 },
      });
      const taskId = (created.result as { task: { taskId: string } }).task.taskId;
      expect((await untilTerminal(host, taskId)).result).toMatchObject({ status: "completed" });
      const result = await step(host, "tasks/result", { taskId });
      direct = normalise([
        { op: "handshake", result: { era: host.era } },
        { op: "tools/call", result: withoutRelatedTask(result.result) },
      ]);
    } finally {
      await host.close();
    }
  }, 120_000);

  /** An SDK v2 host of the whole pool through the lean bridge, served 2026-07-28. */
  async function modernHost(capabilities: Record<string, unknown> = {}): Promise<Client> {
    const bridgeArgs = ["--socket", home.socketPath];
    await waitFor(() => existsSync(scopeSocket(home, bridgeArgs)), 20_000, "the MCP socket");
    const client = new Client(
      { name: "differential-host", version: "1.0.0" },
      { capabilities, versionNegotiation: { mode: "auto" } },
    );
    const { command, args: argv } = bridgeCommand(home, bridgeArgs, "lean");
    await client.connect(
      new StdioClientTransport({ command, args: argv, env: stringEnv(home.env), stderr: "ignore" }),
    );
    expect(client.getProtocolEra()).toBe("modern");
    return client;
  }

  /** The task `path`'s `late` call made, once the server made it (its id, from the fixture). */
  async function madeTask(path: string): Promise<string> {
    await waitFor(() => existsSync(`${path}.waiting`), 20_000, "the call to reach the server");
    writeFileSync(path, "go");
    let taskId = "";
    await waitFor(
      () =>
        (taskId = existsSync(`${path}.made`) ? readFileSync(`${path}.made`, "utf8") : "") !== "",
      20_000,
      "the server to make the task",
    );
    return taskId;
  }

  /** Resolves once the server's store says task `taskId` is `status` (asked through `client`). */
  async function statusReaches(client: Client, taskId: string, status: string): Promise<void> {
    let seen = "";
    await waitFor(
      async () => {
        const peeked = await client.callTool({ name: "tasks__peek", arguments: { taskId } });
        const text = (peeked.content as { text: string }[])[0]!.text;
        seen = (JSON.parse(text) as { status: string }).status;
        return seen === status;
      },
      CANCEL_BOUND_MS,
      `task ${taskId} to be ${status} on the server (last seen ${seen})`,
      200,
    );
  }

  it("is offered the tool without `execution`, as a 2026-07-28 server offers any tool", async () => {
    const client = await modernHost();
    try {
      const { tools } = await client.listTools();
      const research = tools.find((t) => t.name === `everything__${RESEARCH}`);
      expect(research).toBeDefined();
      expect(research).not.toHaveProperty("execution");
    } finally {
      await client.close();
    }
  }, 60_000);

  it("gets the result a 2025-11-25 host gets direct from the task", async () => {
    const client = await modernHost();
    try {
      const result = await client.callTool(
        { name: `everything__${RESEARCH}`, arguments: args },
        { timeout: 60_000 },
      );
      // Served 2026-07-28, where direct spoke 2025-11-25: the era's envelope is set aside.
      const pooled = normalise([
        { op: "handshake", result: { era: "modern" } },
        { op: "tools/call", result },
      ]);
      expect(direct[1]).toMatchObject({ result: { content: [{ type: "text" }] } });
      expect(compare(direct, pooled).join("\n")).toBe("");
    } finally {
      await client.close();
    }
  }, 120_000);

  it("is asked the task's question as its call's, and gets the result that answer makes", async () => {
    const client = await modernHost({ elicitation: { form: {} } });
    const asked: unknown[] = [];
    client.setRequestHandler("elicitation/create", (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { interpretation: "historical" } };
    });
    try {
      const result = await client.callTool(
        { name: `everything__${RESEARCH}`, arguments: { topic: "pools", ambiguous: true } },
        { timeout: 60_000 },
      );
      expect(asked).toHaveLength(1);
      const text = (result.content as { text: string }[])[0]!.text;
      expect(text).toContain("# Research Report: pools (historical)");
    } finally {
      await client.close();
    }
  }, 120_000);

  it("hears the task's progress on its own call's token", async () => {
    const client = await modernHost();
    try {
      const progress: unknown[] = [];
      const result = await client.callTool(
        { name: "tasks__counted", arguments: { steps: 3 } },
        { onprogress: (p) => progress.push({ progress: p.progress, total: p.total }) },
      );
      expect(result.content).toEqual([{ type: "text", text: "tasks counted 3" }]);
      expect(progress).toEqual([1, 2, 3].map((n) => ({ progress: n, total: 3 })));
    } finally {
      await client.close();
    }
  }, 60_000);

  it("cancels the task upstream when the host cancels its call", async () => {
    const client = await modernHost();
    try {
      const path = join(home.dir, "cancelled-gate");
      const withdraw = new AbortController();
      const call = client.callTool(
        { name: "tasks__late", arguments: { path } },
        { signal: withdraw.signal },
      );
      const taskId = await madeTask(path);
      await statusReaches(client, taskId, "working");
      withdraw.abort(new Error("the host cancelled"));
      await expect(call).rejects.toThrow("the host cancelled");
      await statusReaches(client, taskId, "cancelled");
    } finally {
      await client.close();
    }
  }, 90_000);

  it("cancels the task upstream when the host goes", async () => {
    const client = await modernHost();
    const path = join(home.dir, "gone-gate");
    const call = client.callTool({ name: "tasks__late", arguments: { path } });
    void call.catch(() => undefined);
    const taskId = await madeTask(path);
    await client.close();
    const watcher = await modernHost();
    try {
      await statusReaches(watcher, taskId, "cancelled");
    } finally {
      await watcher.close();
    }
  }, 90_000);
});
