/**
 * MCP tasks (2025-11-25) across `mcpool restart`: the server's child moves to the new daemon
 * with its tasks, and so do the pool's records of whose task is whose. A host through the
 * SDK bridge (its session carries on across the restart) asks about its older tasks as
 * before — a live one and a finished one, on the same server process — and lists them; a
 * task it did not make is still not its own.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { bridgeCommand, stringEnv } from "../helpers/bridge.js";
import { runCli } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

/** What the pool declares to a server: the row's own connection serves the host. */
const AS_THE_POOL = { sampling: {}, elicitation: { form: {} } };
const BOUND_MS = 20_000;

const fleet = useFleet();

type Answer = Record<string, unknown>;

describe("tasks across a hand-over restart", () => {
  it("lets a host ask about and list its older tasks on the child that moved", async () => {
    const h = fleet.home("mcpool-tasks-handover-");
    h.writeConfig({ tasks: { command: process.execPath, args: [fixture("tasks-server.mjs")] } });
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
    const work = async (ms: number): Promise<string> => {
      const r = await ask("tools/call", { name: "work", arguments: { ms }, task: { ttl: 60_000 } });
      return (r as { task: { taskId: string } }).task.taskId;
    };
    const peek = async (taskId: string): Promise<{ status: string; pid: number }> => {
      const r = await ask("tools/call", { name: "peek", arguments: { taskId } });
      return JSON.parse((r as { content: { text: string }[] }).content[0]!.text) as never;
    };
    try {
      await fleet.daemon(h);
      const { command, args } = bridgeCommand(h, ["--server", "tasks"], "sdk");
      await client.connect(
        new StdioClientTransport({ command, args, env: stringEnv(h.env), stderr: "ignore" }),
      );
      const live = await work(120_000);
      const finished = await work(1);
      await waitFor(() => done.has(finished), BOUND_MS, "the short task to complete");
      const before = await peek(live);
      expect(before.status).toBe("working");

      const restart = runCli(h, "restart", "--json");
      expect(restart.stderr).toBe("");
      expect(restart.code).toBe(0);
      expect((JSON.parse(restart.stdout) as { adopted: string[] }).adopted).toEqual(["tasks"]);

      // The same host session, carried on to the new daemon by its bridge.
      expect(await peek(live)).toEqual(before);
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
      await client.close();
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);
});
