/**
 * Calls per tool, kept across restarts: counts, errors and time spent per tool and
 * per UTC day, so `mcpool stats --since 7d` can say which tools are used and `--unused`
 * which are paid for on every turn and never called. Bounded (MAX_TOOLS tools, MAX_DAYS
 * days each), held in one small file by a UsageStore, written at most every SAVE_DELAY_MS
 * — and only after a call, so an idle daemon never wakes to write.
 */
import type { ToolUsage, UsageReport } from "../core/types.js";

/** Where the counts live between daemons (the daemon's data directory); absent: memory only. */
export interface UsageStore {
  /** What save() last wrote; undefined when there is nothing (or nothing readable). */
  load(): unknown;
  save(data: UsageData): Promise<void>;
}

export interface StoredToolUsage {
  calls: number;
  errors: number;
  totalMs: number;
  lastAt: number;
  /** UTC day (`YYYY-MM-DD`) → [calls, errors]. */
  days: Record<string, [number, number]>;
}

export interface UsageData {
  version: 1;
  /** Server id → tool (the server's own name) → counts. */
  servers: Record<string, Record<string, StoredToolUsage>>;
}

/** Tools remembered at most; past it, the one called longest ago is forgotten. */
const MAX_TOOLS = 2000;

/** Days of counts kept per tool: enough for `--since 90d`. */
const MAX_DAYS = 90;

/** At most one write per this many ms, however many calls: the file is small, calls are many. */
export const SAVE_DELAY_MS = 5_000;

const DAY_MS = 86_400_000;

function dayOf(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

function isUsageData(value: unknown): value is UsageData {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as UsageData).version === 1 &&
    typeof (value as UsageData).servers === "object" &&
    (value as UsageData).servers !== null
  );
}

export class UsageCounter {
  readonly #store: UsageStore | undefined;
  readonly #saveDelayMs: number;
  readonly #data: UsageData;
  #timer: NodeJS.Timeout | undefined;
  #saving: Promise<void> = Promise.resolve();
  #tools = 0;
  #day: { start: number; name: string } | undefined;

  constructor(store?: UsageStore, saveDelayMs = SAVE_DELAY_MS) {
    this.#store = store;
    this.#saveDelayMs = saveDelayMs;
    const loaded = store?.load();
    this.#data = isUsageData(loaded) ? loaded : { version: 1, servers: {} };
    for (const tools of Object.values(this.#data.servers)) this.#tools += Object.keys(tools).length;
  }

  record(serverId: string, tool: string, at: number, ms: number, ok: boolean): void {
    const tools = (this.#data.servers[serverId] ??= {});
    let usage = tools[tool];
    if (usage === undefined) {
      if (this.#tools >= MAX_TOOLS) this.#forgetOldest();
      usage = tools[tool] = { calls: 0, errors: 0, totalMs: 0, lastAt: at, days: {} };
      this.#tools += 1;
    }
    usage.calls += 1;
    if (!ok) usage.errors += 1;
    usage.totalMs += ms;
    usage.lastAt = Math.max(usage.lastAt, at);
    const today = this.#dayOf(at);
    let day = usage.days[today];
    if (day === undefined) {
      // A new day is the only time an old one can fall out of the MAX_DAYS kept.
      const oldest = dayOf(at - MAX_DAYS * DAY_MS);
      for (const key of Object.keys(usage.days)) if (key < oldest) delete usage.days[key];
      usage.days[today] = day = [0, 0];
    }
    day[0] += 1;
    if (!ok) day[1] += 1;
    this.#scheduleSave();
  }

  /** Tools called since `since` (epoch ms, counted by whole UTC days; absent: ever), most used first. */
  report(options: { since?: number; servers?: readonly string[] } = {}): UsageReport {
    const from = options.since === undefined ? undefined : dayOf(options.since);
    const tools: ToolUsage[] = [];
    for (const [serverId, byTool] of Object.entries(this.#data.servers)) {
      if (options.servers && !options.servers.includes(serverId)) continue;
      for (const [tool, usage] of Object.entries(byTool)) {
        let calls = usage.calls;
        let errors = usage.errors;
        if (from !== undefined) {
          [calls, errors] = [0, 0];
          for (const [day, [c, e]] of Object.entries(usage.days)) {
            if (day >= from) [calls, errors] = [calls + c, errors + e];
          }
        }
        if (calls === 0) continue;
        tools.push({
          serverId,
          tool,
          calls,
          errors,
          meanMs: Math.round((usage.totalMs / Math.max(1, usage.calls)) * 10) / 10,
          lastCalledAt: usage.lastAt,
        });
      }
    }
    tools.sort((a, b) => b.calls - a.calls || a.serverId.localeCompare(b.serverId));
    return { ...(options.since !== undefined ? { since: options.since } : {}), tools };
  }

  /** Writes what is not written yet, now. */
  flush(): Promise<void> {
    if (this.#timer === undefined) return this.#saving;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#save();
  }

  /** dayOf(at), without a Date per call: the day is computed once per UTC day. */
  #dayOf(at: number): string {
    const start = at - (at % DAY_MS);
    if (this.#day?.start !== start) this.#day = { start, name: dayOf(at) };
    return this.#day.name;
  }

  #scheduleSave(): void {
    if (this.#store === undefined || this.#timer !== undefined) return;
    this.#arm();
  }

  /** Apart from #scheduleSave: the timer's closure is made only when one is armed, not a call. */
  #arm(): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#save();
    }, this.#saveDelayMs);
    // A pending write never keeps a process alive; the daemon flushes on its way out.
    this.#timer.unref();
  }

  #save(): Promise<void> {
    const store = this.#store;
    if (store === undefined) return Promise.resolve();
    // One write at a time, each with the counts as they are when it starts.
    this.#saving = this.#saving.then(() => store.save(this.#data)).catch(() => undefined);
    return this.#saving;
  }

  #forgetOldest(): void {
    let oldest: [string, string, number] | undefined;
    for (const [serverId, byTool] of Object.entries(this.#data.servers)) {
      for (const [tool, usage] of Object.entries(byTool)) {
        if (oldest === undefined || usage.lastAt < oldest[2])
          oldest = [serverId, tool, usage.lastAt];
      }
    }
    if (oldest === undefined) return;
    delete this.#data.servers[oldest[0]]![oldest[1]];
    this.#tools -= 1;
  }
}
