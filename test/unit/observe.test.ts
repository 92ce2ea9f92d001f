/**
 * The pure parts of watching the pool: the recent-call window, the per-tool
 * usage counts (windowed by day, bounded, written at most every few seconds), CPU % between
 * samples, `ps` times, `hiddenTools` edits that keep comments, and a `top` frame that fits
 * 80 columns.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { DaemonStatus, ServerState } from "mcpool-client";
import { setHiddenToolsInMcpJson } from "../../src/config/mcp-json-hidden.js";
import { CallWindow } from "../../src/pool/watch/call-window.js";
import { cpuPercent, psSeconds } from "../../src/pool/watch/resources.js";
import { SAVE_DELAY_MS, UsageCounter, type UsageData } from "../../src/pool/watch/usage.js";
import { sparkline } from "../../src/cli/output/figures.js";
import { statusText } from "../../src/cli/commands/status.js";
import { frame, keysOf } from "../../src/cli/commands/top.js";
import { windowMs } from "../../src/cli/commands/stats.js";

const MINUTE = 60_000;
const DAY = 86_400_000;

describe("the recent-call window", () => {
  it("counts the last minute, spreads ten minutes over the sparkline, and takes percentiles of five", () => {
    const window = new CallWindow();
    const now = 100 * MINUTE;
    window.record(now - 9 * MINUTE, 500, true);
    window.record(now - 6 * MINUTE, 400, true);
    for (let i = 1; i <= 98; i++) window.record(now - 2 * MINUTE, i, true);
    window.record(now - 10_000, 99, false);
    window.record(now - 1000, 1000, true);
    const figures = window.figures(now);
    expect(figures.callsLastMinute).toBe(2);
    expect(figures.errorsLastMinute).toBe(1);
    expect(figures.callsPerMinute).toHaveLength(10);
    expect(figures.callsPerMinute.reduce((a, b) => a + b, 0)).toBe(102);
    expect(figures.callsPerMinute[0]).toBe(1);
    expect(figures.callsPerMinute[9]).toBe(2);
    // The 400 and 500 ms calls are older than five minutes.
    expect(figures.p50Ms).toBe(50);
    expect(figures.p99Ms).toBe(99);
    expect(window.figures(now + 11 * MINUTE)).toMatchObject({
      callsLastMinute: 0,
      callsPerMinute: new Array(10).fill(0),
    });
    expect(window.figures(now + 11 * MINUTE).p50Ms).toBeUndefined();
  });
});

describe("usage per tool", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const memoryStore = (): {
    saved: UsageData[];
    load(): unknown;
    save(d: UsageData): Promise<void>;
  } => {
    const saved: UsageData[] = [];
    return {
      saved,
      load: () => (saved.length > 0 ? JSON.parse(JSON.stringify(saved.at(-1))) : undefined),
      save: (data) => {
        saved.push(JSON.parse(JSON.stringify(data)) as UsageData);
        return Promise.resolve();
      },
    };
  };

  it("reports tools by use in a window of days, and writes once per delay however many calls", async () => {
    const store = memoryStore();
    const usage = new UsageCounter(store);
    const now = Date.UTC(2026, 11, 1, 12);
    usage.record("a", "old", now - 10 * DAY, 5, true);
    usage.record("a", "busy", now, 2, true);
    usage.record("a", "busy", now, 4, false);
    usage.record("b", "once", now - DAY, 1, true);
    expect(store.saved).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect(store.saved).toHaveLength(1);

    expect(usage.report().tools.map((t) => [t.serverId, t.tool, t.calls])).toEqual([
      ["a", "busy", 2],
      ["a", "old", 1],
      ["b", "once", 1],
    ]);
    const week = usage.report({ since: now - 7 * DAY });
    expect(week.tools.map((t) => t.tool)).toEqual(["busy", "once"]);
    expect(week.tools[0]).toMatchObject({ errors: 1, meanMs: 3, lastCalledAt: now });
    expect(usage.report({ servers: ["b"] }).tools.map((t) => t.tool)).toEqual(["once"]);

    // A successor reads the counts back.
    const next = new UsageCounter(store);
    expect(next.report().tools).toHaveLength(3);
  });

  it("writes nothing when nothing was called, and flushes what is pending at once", async () => {
    const store = memoryStore();
    const usage = new UsageCounter(store);
    await usage.flush();
    expect(store.saved).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
    usage.record("a", "t", Date.now(), 1, true);
    await usage.flush();
    expect(store.saved).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("resource figures", () => {
  it("measures CPU % between two samples, or since the start without one", () => {
    const before = { cpuSeconds: 1, rssBytes: 0, processes: 1, stopped: false, at: 10_000 };
    const now = { cpuSeconds: 1.5, rssBytes: 0, processes: 1, stopped: false, at: 11_000 };
    expect(cpuPercent(now, before, 0)).toBe(50);
    expect(cpuPercent(now, undefined, 1_000)).toBe(15);
    expect(cpuPercent(now, undefined, undefined)).toBeUndefined();
  });

  it("reads ps's cumulative times", () => {
    expect(psSeconds("0:01.50")).toBe(1.5);
    expect(psSeconds("01:02:03")).toBe(3723);
    expect(psSeconds("2-00:00:01")).toBe(2 * 86_400 + 1);
  });

  it("draws a sparkline scaled to its largest value", () => {
    expect(sparkline([0, 1, 2, 4, 8])).toBe(" ▁▂▄█");
  });

  it("reads --since spans", () => {
    expect(windowMs("7d")).toBe(7 * DAY);
    expect(windowMs("30m")).toBe(30 * MINUTE);
    expect(windowMs("week")).toBeUndefined();
  });
});

describe("hiddenTools edits", () => {
  const text = [
    "{",
    "  // mine",
    '  "mcpServers": {',
    '    "echo": {',
    '      "command": "node", // the runtime',
    '      "args": ["echo.mjs"]',
    "    }",
    "  }",
    "}",
  ].join("\n");

  it("adds and removes tools keeping every comment, and undoes itself exactly", () => {
    const hidden = setHiddenToolsInMcpJson(text, "echo", ["add", "sleep"], true);
    expect(hidden).toContain(
      '      "hiddenTools": ["add","sleep"],\n      "command": "node", // the runtime',
    );
    expect(hidden).toContain("// mine");
    const again = setHiddenToolsInMcpJson(hidden, "echo", ["pid"], true);
    expect(again).toContain('"hiddenTools": ["add","sleep","pid"]');
    expect(setHiddenToolsInMcpJson(again, "echo", ["add"], true)).toBe(again);
    expect(setHiddenToolsInMcpJson(again, "echo", ["add", "sleep", "pid"], false)).toBe(text);
  });

  it("refuses a server the file does not have", () => {
    expect(() => setHiddenToolsInMcpJson(text, "nope", ["x"], true)).toThrow('no server "nope"');
  });
});

describe("a top frame", () => {
  const server = (id: string, extra: Partial<ServerState> = {}): ServerState => ({
    id,
    slug: id,
    label: id,
    config: { id, transport: "stdio", command: "node" },
    status: "ready",
    tools: [],
    pid: 4_194_304,
    startedAt: 0,
    resources: {
      cpuPercent: 100,
      rssBytes: 2 * 1024 ** 3,
      processes: 3,
      callsLastMinute: 12_345,
      errorsLastMinute: 999,
      callsPerMinute: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      p50Ms: 12_345,
      p99Ms: 99_999,
      maxMemoryMb: 4096,
      overMemoryRestarts: 2,
    },
    ...extra,
  });
  const status: DaemonStatus = {
    pid: 1,
    version: "0",
    startedAt: 0,
    socketPath: "/s",
    configPath: `/${"very-long-directory/".repeat(6)}mcp.json`,
    config: { path: "/c", ok: true, problems: [] },
    servers: [server("a-server-with-a-long-id"), server("b", { status: "pin-mismatch" })],
    clients: 3,
    rssBytes: 50 * 1024 ** 2,
  };

  it("fits 80 columns with wide figures and long names, and names every server", () => {
    const lines = frame(status, { selected: 0 }, 99 * DAY, false);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines.some((l) => l.startsWith("a-server-…"))).toBe(true);
    expect(lines.some((l) => l.startsWith("b "))).toBe(true);
    expect(lines).toContain("daemon pid 1 · rss 50M · agents 2 · config ok");
  });

  it("fits a 50×15 terminal: fewer columns, header and footer kept, the selected server in view", () => {
    const many = {
      ...status,
      servers: Array.from({ length: 30 }, (_, i) => server(`s${String(i).padStart(2, "0")}`)),
    };
    const screen = { width: 50, height: 15 };
    const lines = frame(many, { selected: 20 }, DAY, true, screen);
    expect(lines.length).toBeLessThanOrEqual(15);
    expect(lines[0]).toMatch(/^mcpool top · 30 server\(s\)/);
    expect(lines[2]).toMatch(/^SERVER +STATUS +PID +CPU +MEM +C\/MIN$/);
    const plain = (line: string): string =>
      line.replaceAll("\x1b[7m", "").replaceAll("\x1b[0m", "");
    for (const line of lines) expect(plain(line).length).toBeLessThanOrEqual(50);
    expect(lines.some((l) => l.includes("s20 "))).toBe(true);
    expect(lines.some((l) => l.startsWith("daemon pid 1 · rss 50M"))).toBe(true);
    expect(lines.at(-1)).toMatch(/^config /);
    // With the log open the footer still shows, and some log lines below it.
    const withLog = frame(many, { selected: 0, logLines: ["a", "b", "c"] }, DAY, true, screen);
    expect(withLog.length).toBeLessThanOrEqual(15);
    expect(withLog).toContain("log of s00:");
    expect(withLog.some((l) => l.startsWith("daemon pid 1"))).toBe(true);
  });

  it("says how many rows were rejected instead of config ok, as status does", () => {
    const rejected = {
      ...status,
      config: { ...status.config, problems: ["`a`: bad", "`b`: worse"] },
    };
    const lines = frame(rejected, { selected: 0 }, DAY, false);
    expect(lines).toContain("daemon pid 1 · rss 50M · agents 2 · config 2 problems");
    expect(lines.join("\n")).not.toMatch(/config ok/);
    const text = statusText(rejected, DAY);
    expect(text).toMatch(/^config {2}\S*mcp\.json: 2 problems \(the other rows apply\)$/m);
    expect(text).not.toMatch(/: ok$/m);
    expect(statusText(status, DAY)).toMatch(/^config {2}\S*mcp\.json: ok$/m);
  });

  it("reads a daemon of a release before the pool's line of hand-overs was counted", () => {
    // Started by a hand-over, and sending neither `servingSince` nor `handovers`.
    const from = { pid: 7, version: "0.0.9", startedAt: DAY / 2 };
    const older = { ...status, handover: { from, at: DAY / 2, adopted: ["a"] } };
    const text = statusText(older, DAY);
    expect(text).toContain(`serving since ${new Date(DAY / 2).toISOString()}`);
    expect(text).toContain("handed over from pid 7 (version 0.0.9)");
    expect(text).not.toMatch(/NaN|undefined/);
  });
});

describe("top's keys", () => {
  it("reads every key of one read, an escape sequence as one key", () => {
    // What a busy machine hands over in one read when ↓ then r were typed.
    expect(keysOf("\x1b[Br")).toEqual(["\x1b[B", "r"]);
    expect(keysOf("jjrq")).toEqual(["j", "j", "r", "q"]);
    expect(keysOf("\x1b[A\x1b[1;5B\x1bOA\x03")).toEqual(["\x1b[A", "\x1b[1;5B", "\x1bOA", "\x03"]);
    expect(keysOf("r")).toEqual(["r"]);
    // A lone escape, a cut sequence and a character outside the BMP stay whole keys.
    expect(keysOf("\x1b")).toEqual(["\x1b"]);
    expect(keysOf("q\x1b[")).toEqual(["q", "\x1b["]);
    expect(keysOf("😀q")).toEqual(["😀", "q"]);
  });
});
