/**
 * The daemon's pool and its monitor, built from the config's first read: the pool's options
 * as the daemon sets them (its stores in the data folder, its children marked and recorded,
 * the `"mcpool"` section, then the caller's overrides), and the monitor that keeps usage.
 */
import { basename } from "node:path";
import { sectionValues } from "../config/pool-section.js";
import { ErrorCode, McpError } from "../pool/core/mcp-error.js";
import { McpPool, type McpPoolOptions } from "../pool/pool.js";
import { PoolMonitor } from "../pool/watch/monitor.js";
import { VERSION } from "../version.js";
import type { ConfigRead, ConfigSource } from "./config/source.js";
import type { Predecessor } from "./handover/predecessor.js";
import type { DaemonLog } from "./process/logger.js";
import { MARK_VARIABLE } from "./process/marked.js";
import type { DaemonPaths } from "./process/paths.js";
import type { PidRecords } from "./process/pid-records.js";
import type { SaveHealth } from "./process/save-health.js";
import type { ConnectionCap } from "./socket/connection-cap.js";
import { createFilePinStore } from "./stores/pins.js";
import { createFileToolsCache } from "./stores/tools-cache.js";
import { createFileTokenStore } from "./stores/tokens.js";
import { createFileUsageStore } from "./stores/usage.js";

export interface DaemonPoolDeps {
  paths: DaemonPaths;
  log: DaemonLog;
  config: ConfigSource;
  /** The config's first read: the rows and section the pool starts from. */
  first: ConfigRead;
  /** Logs what each read of the config found. */
  logRead(status: ConfigRead["status"]): void;
  connections: ConnectionCap;
  /** Where the children are recorded, so a successor can reap them. */
  records: PidRecords;
  /** The value every child (and its descendants) carries in MARK_VARIABLE. */
  mark: string;
  saves: SaveHealth;
  predecessor: Predecessor | undefined;
  /** Overrides of the pool's options, after the file's section. */
  overrides: Partial<McpPoolOptions> | undefined;
}

/** `mcpool.maxConnections` and `mcpool.maxConnectionsPerProcess` into the cap. */
export function configureCap(cap: ConnectionCap, section: Record<string, unknown>): void {
  const values = sectionValues(section, "daemon");
  cap.configure(values.maxConnections, values.maxConnectionsPerProcess);
}

/** Builds the pool and starts its monitor; nothing is dialled until the pool's first sync. */
export function daemonPool(deps: DaemonPoolDeps): { pool: McpPool; monitor: PoolMonitor } {
  const { paths, log, first, records, saves } = deps;
  // Made after the pool it reads: a load before then (none today, only a sync loads) finds
  // none, and the monitor starts from `first`.
  const made: { monitor?: PoolMonitor } = {};
  const pool = new McpPool({
    clientName: "mcpool",
    clientVersion: VERSION,
    log,
    rowsFrom: basename(paths.configPath),
    load: async () => {
      const read = await deps.config.read();
      deps.logRead(read.status);
      configureCap(deps.connections, read.pool);
      made.monitor?.setRows(read.rows);
      return read.rows;
    },
    childMark: { [MARK_VARIABLE]: deps.mark },
    ...(deps.predecessor ? { handed: deps.predecessor.handed } : {}),
    onChild: (event) => {
      if (event.type === "spawn") records.add(event.pid, event.serverId);
      else records.remove(event.pid);
    },
    toolsCache: createFileToolsCache(paths.dataDir, saves),
    // A lazy row's tools are learned once, so agents can find them (pool-options.ts).
    learnLazyTools: true,
    tokenStore: createFileTokenStore(paths.dataDir, saves),
    pins: createFilePinStore(paths.dataDir, saves),
    // Agents answer the elicitations of their own calls, so every connection declares the
    // capability; a question no agent takes is declined.
    onElicit: () => ({ action: "decline" }),
    // Sampling likewise, unless `"sampling": false`; a request no agent takes is refused.
    ...(sectionValues(first.pool, "daemon").sampling === false
      ? {}
      : {
          onSample: () => {
            throw new McpError(ErrorCode.MethodNotFound, "sampling not available");
          },
        }),
    ...sectionValues(first.pool, "pool"),
    ...deps.overrides,
  });
  const monitor = new PoolMonitor({
    pool,
    usageStore: createFileUsageStore(paths.dataDir, saves),
    ...sectionValues(first.pool, "monitor"),
    log,
  });
  monitor.setRows(first.rows);
  monitor.start();
  made.monitor = monitor;
  return { pool, monitor };
}
