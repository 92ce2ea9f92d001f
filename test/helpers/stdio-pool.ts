/** Pools of real stdio children for integration tests: rows running fixtures, and a tracker. */
import { McpPool, type McpServerConfig } from "../../src/index.js";
import { fixture } from "./processes.js";

export type PoolOptions = Partial<ConstructorParameters<typeof McpPool>[0]>;

/** A stdio row that runs `test/fixtures/<script>` with this Node. */
export function nodeRow(
  id: string,
  script: string,
  extra: Partial<McpServerConfig> = {},
): McpServerConfig {
  return {
    id,
    transport: "stdio",
    command: process.execPath,
    args: [fixture(script)],
    ...extra,
  } as McpServerConfig;
}

/** Silent pools on a 15 s connect budget; `made` lists them so afterEach can close them. */
export function poolMaker(): { pool(options?: PoolOptions): McpPool; made: McpPool[] } {
  const made: McpPool[] = [];
  return {
    made,
    pool(options = {}) {
      const created = new McpPool({
        clientName: "mcpool-test",
        log: {},
        connectTimeoutMs: 15_000,
        ...options,
      });
      made.push(created);
      return created;
    },
  };
}
