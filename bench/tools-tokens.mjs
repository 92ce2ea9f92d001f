/**
 * What a real setup's tool definitions cost a model, to choose `toolsTokenWarning`'s default:
 * the pool's own estimate (what the warning compares) and the bytes of the
 * definitions, per server and in all, for the built-in echo server and the three reference
 * servers a new user tries first (server-everything, -memory, -filesystem), and for those
 * four with as many again of the same size, a setup of eight servers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { McpPool } from "../dist/index.js";
import { echoServerPath } from "../dist/demo/echo-server-path.js";
import { DEFAULT_TOOLS_TOKEN_WARNING } from "../dist/pool/pool-options.js";
import { figure } from "./lib/report.mjs";
import { run } from "./lib/harness.mjs";

const require = createRequire(import.meta.url);
const bin = (name) => require.resolve(`@modelcontextprotocol/${name}/dist/index.js`);

run("tools-tokens", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpool-tokens-"));
  const node = process.execPath;
  const rows = [
    { id: "echo", transport: "stdio", command: node, args: [echoServerPath] },
    { id: "everything", transport: "stdio", command: node, args: [bin("server-everything")] },
    {
      id: "memory",
      transport: "stdio",
      command: node,
      args: [bin("server-memory")],
      env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
    },
    { id: "filesystem", transport: "stdio", command: node, args: [bin("server-filesystem"), dir] },
  ];
  const pool = new McpPool({ clientName: "bench-tools-tokens", log: {} });
  try {
    await pool.sync(rows);
    const figures = [];
    let tokens = 0;
    let bytes = 0;
    for (const server of pool.catalog()) {
      const defs = pool.tools({ servers: [server.id] });
      const size = Buffer.byteLength(JSON.stringify(defs));
      figures.push(
        figure({
          name: `tokens.${server.id}`,
          unit: "tokens",
          value: server.tools.reduce((sum, tool) => sum + tool.tokens, 0),
          tools: defs.length,
          bytes: size,
        }),
      );
      tokens += figures.at(-1).value;
      bytes += size;
    }
    figures.push(figure({ name: "tokens.four-servers", unit: "tokens", value: tokens, bytes }));
    figures.push(figure({ name: "tokens.eight-servers", unit: "tokens", value: tokens * 2 }));
    figures.push(
      figure({
        name: "toolsTokenWarning.default",
        unit: "tokens",
        value: DEFAULT_TOOLS_TOKEN_WARNING,
        baseline: tokens,
        baselineLabel: "the four servers",
      }),
    );
    return figures;
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
