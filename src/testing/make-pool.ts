import { McpPool, type McpPoolOptions } from "../pool/pool.js";
import { memoryTransport, type ServerBuilder } from "./memory-transport.js";

/** A pool whose rows are served in memory by `servers`; silent unless given a log. */
export function makePool(
  options: { servers: Readonly<Record<string, ServerBuilder>> } & Partial<McpPoolOptions>,
): McpPool {
  const { servers, ...rest } = options;
  return new McpPool({
    clientName: "mcpool-test",
    log: {},
    createTransport: memoryTransport(servers),
    ...rest,
  });
}
