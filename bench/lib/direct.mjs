/**
 * The baseline arm: what an agent does without mcpool — the SDK's own Client and
 * StdioClientTransport, in-process, against a child it spawns itself.
 */
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { onCleanup } from "./cleanup.mjs";

/** Spawns `row` ({command, args, env}), initializes; closed at cleanup unless closed before. */
export async function directClient(row, name = "bench-direct") {
  const transport = new StdioClientTransport({
    command: row.command,
    args: row.args ?? [],
    // The whole environment, as the daemon's `childEnv: inherit` gives its children.
    env: { ...process.env, ...row.env },
    stderr: "ignore",
  });
  const client = new Client({ name, version: "0.0.0" }, { capabilities: {} });
  const off = onCleanup(() => client.close());
  await client.connect(transport);
  return {
    client,
    pid: transport.pid,
    async close() {
      off();
      await client.close();
    },
  };
}

/** Every tool of a connected client, following pagination. */
export async function listAll(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}
