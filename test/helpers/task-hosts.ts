/**
 * An SDK host of the tasks tests (test/fixtures/tasks-server.mjs): it declares what the pool
 * declares to a server, so the row's own connection serves it, and keeps the task statuses
 * it is sent.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

/** What the pool declares to a server (elicitation form and sampling): the row's connection. */
export const AS_THE_POOL = { sampling: {}, elicitation: { form: {} } };

export interface TaskHost {
  client: Client;
  /** The task statuses it was sent, in order. */
  statuses: { taskId: string; status: string; statusMessage?: string }[];
  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** A host started as `command args`, connected. */
export async function taskHost(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<TaskHost> {
  const c = new Client({ name: "tasks-host", version: "1.0.0" }, { capabilities: AS_THE_POOL });
  const statuses: TaskHost["statuses"] = [];
  c.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    const { taskId, status, statusMessage } = n.params;
    statuses.push({ taskId, status, ...(statusMessage !== undefined ? { statusMessage } : {}) });
  });
  await c.connect(new StdioClientTransport({ command, args, env, stderr: "ignore" }));
  return {
    client: c,
    statuses,
    request: (method, params) =>
      c.request({ method, params } as never, ResultSchema) as Promise<Record<string, unknown>>,
  };
}
