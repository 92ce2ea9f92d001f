/**
 * What `mcpool top`, `status` and `stats` read: a server's resources and recent
 * calls, and the use of each tool over a window.
 */
/**
 * What a server costs and how it is used right now: sampled only when someone asks
 * (`state({ resources: true })`, `mcpool status`, `mcpool top`) or a memory limit is set.
 */
export interface ServerResources {
  /** CPU % of one core used by the child's process group since the last look (or since it started). */
  cpuPercent?: number;
  /** Resident memory of the child's whole process group, bytes. */
  rssBytes?: number;
  /** Live processes in the group. */
  processes?: number;
  /**
   * The server's process is stopped (SIGSTOP, SIGTSTP, a debugger): its calls wait until it
   * is continued, or until their timeout.
   */
  stopped?: true;
  callsLastMinute: number;
  errorsLastMinute: number;
  /** Calls per minute over the last ten minutes, oldest first. */
  callsPerMinute: number[];
  /** Latency over the last five minutes, ms; absent without calls. */
  p50Ms?: number;
  p99Ms?: number;
  /** The limit in force: the row's `maxMemoryMb`, else the pool's. */
  maxMemoryMb?: number;
  /** Times this daemon replaced the server for staying over it. */
  overMemoryRestarts: number;
}

/** One tool's use over a window, kept across daemon restarts. */
export interface ToolUsage {
  serverId: string;
  /** The server's own name for the tool. */
  tool: string;
  calls: number;
  errors: number;
  /** Mean latency over every recorded call, ms. */
  meanMs: number;
  /** Epoch ms. */
  lastCalledAt: number;
}

export interface UsageReport {
  /** Epoch ms the window starts (counted by whole UTC days); absent: since counting began. */
  since?: number;
  /** Only tools called in the window, most called first. */
  tools: ToolUsage[];
}
