/**
 * `mcpool demo`: pools the package's own echo server in this process, prints its tools
 * and one call, and closes. Proves the install works before any daemon is involved.
 */
import { McpPool } from "../../pool/pool.js";
import { echoServerPath } from "../../demo/echo-server-path.js";

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
