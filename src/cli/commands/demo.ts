/**
 * `mcpool demo`: pools the package's own echo server in this process, prints its tools
 * and one call, and closes. Proves the install works before any daemon is involved. And
 * `mcpool echo-server`, the server it pools, on stdin and stdout.
 */
import { echoServerPath } from "../../demo/echo-server-path.js";
import { EXIT } from "../output/exit-codes.js";
import type { CommandContext } from "./context.js";

/** The call the demo makes, and shows. */
const DEMO_CALL = { tool: "echo__add", input: { a: 1, b: 2 } };

export interface DemoOptions {
  /** One JSON document instead of lines for a person. */
  json?: boolean;
}

export async function demo(
  write: (line: string) => void,
  options: DemoOptions = {},
): Promise<void> {
  // Loaded here: `echo-server`, whose runner is in this module too, needs no pool.
  const { McpPool } = await import("../../pool/pool.js");
  const pool = new McpPool({ clientName: "mcpool-demo" });
  try {
    await pool.sync([
      {
        id: "echo",
        label: "Echo",
        transport: "stdio",
        command: process.execPath,
        args: [echoServerPath],
      },
    ]);
    const [echo] = pool.state();
    const tools = pool
      .tools()
      .map(({ function: { name, description } }) => ({ name, description }));
    const result = await pool.call(DEMO_CALL.tool, DEMO_CALL.input);
    if (options.json) {
      const server = { id: "echo", status: echo?.status, pid: echo?.pid };
      write(JSON.stringify({ server, tools, call: { ...DEMO_CALL, result } }, null, 2));
      return;
    }
    write(`server echo: ${echo?.status}, pid ${echo?.pid}, ${tools.length} tools`);
    for (const tool of tools) write(`  ${tool.name.padEnd(14)} ${tool.description}`);
    write(`${DEMO_CALL.tool} ${JSON.stringify(DEMO_CALL.input)} → ${result}`);
  } finally {
    await pool.close();
  }
}

/** `mcpool demo`. */
export async function demoCommand(context: CommandContext): Promise<number> {
  await demo(context.out, { json: context.json });
  return EXIT.ok;
}

/**
 * `mcpool echo-server`: the server owns stdin and stdout, and ends the process at stdin's
 * end (bin.ts starts it without the CLI; this is the same server for `node dist/cli/main.js`).
 */
export async function echoServerCommand(): Promise<number> {
  await import("../../demo/echo-server-bin.js");
  return new Promise<number>(() => undefined);
}
