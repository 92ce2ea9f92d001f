/**
 * Watching the pool: recent calls per server and per tool from the
 * pool's `call` events, CPU and memory of each stdio server's process group when someone
 * looks, and the memory limits. A limit is the only thing that samples on a timer, and only
 * while a server it applies to has a live process: with no limit set, an idle daemon does
 * nothing at all here.
 *
 * A server whose group stays over its `maxMemoryMb` for OVER_LIMIT_SAMPLES samples in a row
 * is replaced the way `reconnect` replaces it: its calls in flight finish (within the call
 * timeout) before the old child is closed. It is a safety net, not a cgroup: between two
 * samples a server may grow past the limit; the README says how to add `MemoryMax=`.
 */
import type { McpServerConfig } from "../../config/rows.js";
import { CallWindow } from "./call-window.js";
import { cpuPercent, sampleGroups, type GroupSample } from "./resources.js";
import type {
  PoolEvent,
  PoolLog,
  ServerResources,
  ServerState,
  UsageReport,
} from "../core/types.js";
import { serverLog } from "../core/server-log.js";
import { UsageCounter, type UsageStore } from "./usage.js";

/** What the monitor uses of McpPool. */
export interface MonitoredPool {
  state(options?: { secrets?: boolean }): readonly ServerState[];
  onEvent(listener: (event: PoolEvent) => void): () => void;
  /** Emits `over-memory` and replaces the server gracefully. */
  replaceOverMemory(id: string, rssBytes: number, limitMb: number): Promise<void>;
}

export interface PoolMonitorOptions {
  pool: MonitoredPool;
  /** Keeps per-tool counts across restarts; absent: in memory only. */
  usageStore?: UsageStore;
  /** Pool-wide memory limit per server in MB; a row's `maxMemoryMb` outranks it. Absent: none. */
  maxMemoryMb?: number;
  /** How often a server under a limit is sampled, ms. Default MEMORY_CHECK_MS. */
  memoryCheckMs?: number;
  log?: PoolLog;
}

/** Often enough to catch a leak within seconds; rare enough to cost nothing measurable. */
export const MEMORY_CHECK_MS = 5_000;

/** Samples in a row over the limit before a replacement: one spike is not a leak. */
const OVER_LIMIT_SAMPLES = 2;

const MB = 1024 * 1024;

export class PoolMonitor {
  readonly #options: PoolMonitorOptions;
  readonly #usage: UsageCounter;
  readonly #windows = new Map<string, CallWindow>();
  /** The last sample per process group, for CPU % between two looks. */
  #lastSamples = new Map<number, GroupSample>();
  /** Row id → its own `maxMemoryMb`, from the rows last loaded. */
  #rowLimits = new Map<string, number>();
  readonly #overCount = new Map<string, number>();
  readonly #restarts = new Map<string, number>();
  readonly #replacing = new Set<string>();
  #off: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checking = false;
  #closed = false;

  constructor(options: PoolMonitorOptions) {
    this.#options = options;
    this.#usage = new UsageCounter(options.usageStore);
  }

  /** Starts counting calls and, where a limit applies, checking memory. */
  start(): void {
    if (this.#off || this.#closed) return;
    this.#off = this.#options.pool.onEvent((event) => this.#onEvent(event));
    this.#armMemoryChecks();
  }

  /** The rows as loaded: their `maxMemoryMb` apply without a restart. */
  setRows(rows: readonly McpServerConfig[]): void {
    this.#rowLimits = new Map();
    for (const row of rows) {
      if (typeof row.maxMemoryMb === "number") this.#rowLimits.set(row.id, row.maxMemoryMb);
    }
    // After the reconcile these rows start has registered them.
    setImmediate(() => this.#armMemoryChecks());
  }

  /** `states` with their `resources`: one sample of every live process group, now. */
  async withResources(states: readonly ServerState[]): Promise<ServerState[]> {
    const now = Date.now();
    const { samples, previous } = await this.#sample(states.map((s) => s.pid));
    return states.map((state) => ({
      ...state,
      resources: this.#resourcesOf(state, samples, previous, now),
    }));
  }

  usage(options: { since?: number; servers?: readonly string[] } = {}): UsageReport {
    return this.#usage.report(options);
  }

  /** Stops listening and checking, and writes the counts not yet written. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#off?.();
    this.#off = undefined;
    this.#disarm();
    await this.#usage.flush();
  }

  #onEvent(event: PoolEvent): void {
    if (event.type === "call") {
      if (event.serverId === undefined || event.toolName === undefined || event.cached) return;
      const at = Date.now();
      let window = this.#windows.get(event.serverId);
      if (window === undefined) this.#windows.set(event.serverId, (window = new CallWindow()));
      window.record(at, event.ms, event.ok);
      this.#usage.record(event.serverId, event.toolName, at, event.ms, event.ok);
    } else if (event.type === "connect" || event.type === "close") {
      this.#armMemoryChecks();
    }
  }

  #limitOf(state: ServerState): number | undefined {
    const limit = this.#rowLimits.get(state.id) ?? this.#options.maxMemoryMb;
    return limit !== undefined && limit > 0 ? limit : undefined;
  }

  #resourcesOf(
    state: ServerState,
    samples: ReadonlyMap<number, GroupSample>,
    previous: ReadonlyMap<number, GroupSample>,
    now: number,
  ): ServerResources {
    const pid = state.pid;
    const sample = pid !== undefined ? samples.get(pid) : undefined;
    const limit = this.#limitOf(state);
    const cpu =
      sample && pid !== undefined
        ? cpuPercent(sample, previous.get(pid), state.startedAt)
        : undefined;
    return {
      ...(sample ? { rssBytes: sample.rssBytes, processes: sample.processes } : {}),
      ...(sample?.stopped === true ? { stopped: true as const } : {}),
      ...(cpu !== undefined ? { cpuPercent: cpu } : {}),
      ...(this.#windows.get(state.id)?.figures(now) ?? {
        callsLastMinute: 0,
        errorsLastMinute: 0,
        callsPerMinute: new CallWindow().figures(now).callsPerMinute,
      }),
      ...(limit !== undefined ? { maxMemoryMb: limit } : {}),
      overMemoryRestarts: this.#restarts.get(state.id) ?? 0,
    };
  }

  /** Samples the groups led by `pids`, keeping them for the next look's CPU %. */
  async #sample(
    pids: readonly (number | undefined)[],
  ): Promise<{ samples: Map<number, GroupSample>; previous: Map<number, GroupSample> }> {
    const samples = await sampleGroups(pids.filter((pid): pid is number => pid !== undefined));
    const previous = this.#lastSamples;
    this.#lastSamples = samples;
    return { samples, previous };
  }

  /** A timer while some server with a live process has a limit; none otherwise. */
  #armMemoryChecks(): void {
    if (this.#closed) return;
    // No limit anywhere: nothing to look at (and no state() walk per connect of a big pool).
    if (this.#rowLimits.size === 0 && !(this.#options.maxMemoryMb ?? 0)) return this.#disarm();
    const limited = this.#options.pool
      .state()
      .some((state) => state.pid !== undefined && this.#limitOf(state) !== undefined);
    if (!limited) return this.#disarm();
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(
      () => void this.#checkMemory(),
      this.#options.memoryCheckMs ?? MEMORY_CHECK_MS,
    );
    this.#timer.unref();
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #checkMemory(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const limited = this.#options.pool
        .state()
        .filter((state) => state.pid !== undefined && this.#limitOf(state) !== undefined);
      const samples = await sampleGroups(limited.map((state) => state.pid!));
      for (const state of limited) {
        const limit = this.#limitOf(state)!;
        const rss = samples.get(state.pid!)?.rssBytes ?? 0;
        const over = rss > limit * MB ? (this.#overCount.get(state.id) ?? 0) + 1 : 0;
        this.#overCount.set(state.id, over);
        if (over >= OVER_LIMIT_SAMPLES) this.#replace(state.id, rss, limit);
      }
    } finally {
      this.#checking = false;
    }
  }

  #replace(id: string, rssBytes: number, limitMb: number): void {
    if (this.#replacing.has(id) || this.#closed) return;
    this.#replacing.add(id);
    this.#overCount.set(id, 0);
    this.#restarts.set(id, (this.#restarts.get(id) ?? 0) + 1);
    const log = serverLog(this.#options.log ?? {}, id);
    log.info(
      `its processes use ${Math.round(rssBytes / MB)} MB, over its maxMemoryMb of ${limitMb} in ${OVER_LIMIT_SAMPLES} samples in a row; replacing it (calls in flight finish first)`,
    );
    this.#options.pool
      .replaceOverMemory(id, rssBytes, limitMb)
      .catch((error: unknown) => log.error(`replacing it failed: ${(error as Error).message}`))
      .finally(() => this.#replacing.delete(id));
  }
}
