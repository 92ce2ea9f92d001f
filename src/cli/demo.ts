/**
 * `mcpool demo`: pools the package's own echo server in this process, prints its tools
 * and one call, and closes. Proves the install works before any daemon is involved.
 */
import { McpPool } from "../pool/pool.js";
import { echoServerPath } from "../demo/echo-server-path.js";

export async function demo(write: (line: string) => void): Promise<void> {
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
    write(`server echo: ${echo?.status}, pid ${echo?.pid}, ${echo?.tools.length} tools`);
    for (const tool of pool.tools())
      write(`  ${tool.function.name.padEnd(14)} ${tool.function.description}`);
    const answer = await pool.call("echo__add", { a: 1, b: 2 });
    write(`echo__add {"a":1,"b":2} → ${answer}`);
  } finally {
    await pool.close();
  }
}
