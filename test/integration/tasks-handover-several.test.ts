/**
 * MCP tasks (2025-11-25) of a host of several servers across `mcpool restart`. Through the
 * whole pool's lean bridge or perl relay one session holds the tasks of two servers that both count their
 * task ids from 1, so the host knows the second server's task by `<id>@<server>`. The new
 * daemon makes the session anew when the entry dials again; the ids the host was given move
 * with the task records, so each older task it asks about (or cancels) is the one it was
 * given under that id, as each server's own host is answered direct, and never the other
 * server's task of the same id.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { runCliAsync, serversReady, type TestHome } from "../helpers/daemon.js";
import { testFleet } from "../helpers/fleet.js";
import { daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

type Answer = Record<string, unknown>;
const TASK = { ttl: 60_000 };
const counted = (name: string) => ({
  command: process.execPath,
  args: [fixture("tasks-server.mjs")],
  env: { TASK_IDS: "counted", TASKS_NAME: name },
});

/** An SDK host of `command`: its requests, answered as results. */
async function open(command: string, args: string[], env: Record<string, string>) {
  const client = new Client({ name: "tasks-host", version: "1.0.0" }, { capabilities: {} });
  await client.connect(new StdioClientTransport({ command, args, env, stderr: "ignore" }));
  const ask = (method: string, params: Answer): Promise<Answer> =>
    client.request({ method, params } as never, ResultSchema) as Promise<Answer>;
  const work = async (tool: string): Promise<string> => {
    const made = await ask("tools/call", { name: tool, arguments: { ms: 120_000 }, task: TASK });
    return (made as { task: { taskId: string } }).task.taskId;
  };
  const peek = async (tool: string, taskId: string): Promise<string> => {
    const r = await ask("tools/call", { name: tool, arguments: { taskId } });
    return (JSON.parse((r as { content: { text: string }[] }).content[0]!.text) as Answer)
      .status as string;
  };
  return { client, ask, work, peek };
}

/** What a server's own host is answered direct: `tasks/get` then `tasks/cancel` of its task. */
async function direct(): Promise<{ got: Answer; cancelled: Answer }> {
  const host = await open(process.execPath, [fixture("tasks-server.mjs")], {
    ...stringEnv(process.env as never),
    TASK_IDS: "counted",
  });
  try {
    const id = await host.work("work");
    const got = await host.ask("tasks/get", { taskId: id });
    const cancelled = await host.ask("tasks/cancel", { taskId: id });
    return { got, cancelled };
  } finally {
    await host.client.close();
  }
}

/** An answer's fields and status, the task named by the id the host asked with. */
const shape = (a: Answer, id: string) => ({
  fields: Object.keys(a).sort(),
  status: a.status,
  named: a.taskId === id,
});

// Each test its own home and daemon: they run side by side.
describe.concurrent("tasks of several servers across a hand-over restart", () => {
  for (const via of ["lean", "perl"] as const) {
    it(`answers a ${via} host about and cancels each server's older task by the id it was given`, async (context) => {
      const fleet = testFleet(context);
      const want = await direct();
      const h: TestHome = fleet.home(`mcpool-tasks-handover-several-${via}-`);
      h.writeConfig({ a: counted("a"), b: counted("b") });
      const pool = ["--socket", h.socketPath];
      let host: Awaited<ReturnType<typeof open>> | undefined;
      try {
        await fleet.daemon(h);
        // Both servers up: the session offers the tasks of the servers in scope that offer them.
        await serversReady(h);
        await waitFor(() => existsSync(scopeSocket(h, pool)), 20_000, "the pool's MCP socket");
        const { command, args } = bridgeCommand(h, pool, via);
        host = await open(command, args, stringEnv(h.env));
        // b's task first: the host knows it by b's own id, and a's, of the same id, otherwise.
        const ofB = await host.work("b__work");
        const ofA = await host.work("a__work");
        expect(ofA).toBe(`${ofB}@a`);
        const restart = await runCliAsync(h, "restart", "--json");
        expect(restart.stderr).toBe("");
        expect((JSON.parse(restart.stdout) as { adopted: string[] }).adopted.sort()).toEqual([
          "a",
          "b",
        ]);

        expect(shape(await host.ask("tasks/get", { taskId: ofB }), ofB)).toEqual(
          shape(want.got, want.got.taskId as string),
        );
        // Cancelling b's task cancels b's, not a's task of the same server id.
        const cancelledB = await host.ask("tasks/cancel", { taskId: ofB });
        expect(shape(cancelledB, ofB)).toEqual(shape(want.cancelled, want.got.taskId as string));
        expect(await host.peek("b__peek", ofB)).toBe("cancelled");
        expect(await host.peek("a__peek", ofB)).toBe("working");
        const gotA = await host.ask("tasks/get", { taskId: ofA });
        expect(shape(gotA, ofA)).toEqual(shape(want.got, want.got.taskId as string));
        const cancelledA = await host.ask("tasks/cancel", { taskId: ofA });
        expect(shape(cancelledA, ofA)).toEqual(shape(want.cancelled, want.got.taskId as string));
        expect(await host.peek("a__peek", ofB)).toBe("cancelled");
        const listed = await host.ask("tasks/list", {});
        expect((listed.tasks as { taskId: string }[]).map((t) => t.taskId).sort()).toEqual(
          [ofA, ofB].sort(),
        );
        // An id the host was never given is not found, as direct.
        await expect(host.ask("tasks/get", { taskId: `${ofB}@c` })).rejects.toThrow(/not found/i);
      } finally {
        await host?.client.close().catch(() => undefined);
        await stopAll(daemonsFor(h.socketPath));
      }
    }, 120_000);
  }
});
