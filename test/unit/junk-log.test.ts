import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { JunkLog, MAX_JUNK_LINE_CHARS } from "../../src/pool/server/junk-log.js";
import { printable } from "../../src/pool/core/printable.js";
import { redactSecrets } from "../../src/pool/core/secrets.js";
import { StderrTail } from "../../src/pool/transport/stderr-tail.js";

const SECRET = "canary-0123456789";
const redact = (text: string): string => redactSecrets(text, [SECRET]);
const keep = (text: string): string => text;

function junkLog(options: { maxLines?: number; windowMs?: number } = {}) {
  const lines: string[] = [];
  const log = new JunkLog({ log: (line) => lines.push(line), ...options });
  return { log, lines };
}

describe("JunkLog", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("logs a line tagged with its server and redacted with that server's secrets", () => {
    const { log, lines } = junkLog();
    log.line("weather", `loaded API_KEY=${SECRET} from .env`, redact);
    expect(lines).toEqual([
      "mcpool: weather: skipped a stdout line that is not JSON-RPC: loaded API_KEY=[redacted] from .env",
    ]);
  });

  it("redacts a secret broken up by colour codes, and one that a cut would have split", () => {
    const { log, lines } = junkLog();
    log.line("a", `key \x1b[1m${SECRET.slice(0, 5)}\x1b[0m${SECRET.slice(5)}`, redact);
    log.line("a", `${"x".repeat(MAX_JUNK_LINE_CHARS - 5)}${SECRET}`, redact);
    expect(lines.join("\n")).not.toContain(SECRET.slice(0, 5) + SECRET.slice(5, 8));
    expect(lines[0]).toMatch(/: key \[redacted\]$/);
    expect(lines[1]).not.toContain("canar");
  });

  it("strips escape sequences and shows control bytes, so the log cannot drive a terminal", () => {
    const { log, lines } = junkLog();
    log.line(
      "a",
      "\x1b[31mred\x1b[0m \x1b]0;title\x07 bell\x07 nul\x00 cr\rx \x9b2J del\x7f",
      keep,
    );
    expect(lines[0]).toMatch(/: red {2}bell\\x07 nul\\x00 cr\\x0dx {2}del\\x7f$/);
    // eslint-disable-next-line no-control-regex
    expect(lines[0]).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  });

  it("cuts a long line and says how long it was", () => {
    const { log, lines } = junkLog();
    log.line("a", "y".repeat(100_000), keep);
    const logged = lines[0]!.split("JSON-RPC: ")[1]!;
    expect(logged).toBe(`${"y".repeat(MAX_JUNK_LINE_CHARS)}… (100000 characters)`);
  });

  it("logs at most maxLines per window per server, then one line counting the rest", () => {
    const { log, lines } = junkLog({ maxLines: 3, windowMs: 10_000 });
    for (let i = 0; i < 1000; i++) log.line("chatty", `line ${i}`, keep);
    log.line("quiet", "one line", keep);
    expect(lines).toHaveLength(4);
    expect(lines.filter((l) => l.startsWith("mcpool: chatty: skipped"))).toHaveLength(3);

    vi.advanceTimersByTime(10_000);
    expect(lines.slice(4)).toEqual([
      "mcpool: chatty: … and 997 more stdout lines that are not JSON-RPC in the last 10 s (not logged)",
    ]);
    // A new window: lines are logged again.
    log.line("chatty", "after", keep);
    expect(lines.at(-1)).toMatch(/chatty: skipped .*: after$/);
  });

  it("arms no timer while servers stay under the limit, and one only while dropping lines", () => {
    const { log } = junkLog({ maxLines: 2, windowMs: 10_000 });
    log.line("a", "1", keep);
    log.line("a", "2", keep);
    expect(vi.getTimerCount()).toBe(0);
    log.line("a", "3", keep);
    log.line("a", "4", keep);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ignores blank lines", () => {
    const { log, lines } = junkLog();
    log.line("a", "", keep);
    log.line("a", "   ", keep);
    expect(lines).toEqual([]);
  });
});

describe("printable", () => {
  it("removes CSI, OSC and short escape sequences whole, 7-bit and 8-bit", () => {
    expect(printable("\x1b[1;31mbold\x1b[0m")).toBe("bold");
    expect(printable("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\")).toBe("link");
    expect(printable("\x1b(Bplain\x1bc")).toBe("plain");
    expect(printable("\x9b31mred\x9d0;t\x9c")).toBe("red");
    expect(printable("\x1bPdevice\x1b\\ok")).toBe("ok");
  });

  it("shows every other C0, DEL and C1 control as \\xNN", () => {
    expect(printable("a\x00b\x07c\te\nf\x7fg\x85 lone ESC\x1b")).toBe(
      "a\\x00b\\x07c\\x09e\\x0af\\x7fg\\x85 lone ESC\\x1b",
    );
  });

  it("keeps the lines and tabs of multi-line text", () => {
    expect(printable("one\r\n\ttwo\x07\rthree\n", { multiline: true })).toBe(
      "one\n\ttwo\\x07\\x0dthree\n",
    );
  });

  it("leaves ordinary text, including non-ASCII, alone", () => {
    const text = "Größe 42 — 🙂 ok [x] \\ done";
    expect(printable(text)).toBe(text);
  });
});

describe("StderrTail", () => {
  it("reads back its lines without escape codes or control bytes", () => {
    const tail = new StderrTail();
    tail.push(Buffer.from("\x1b[31mTraceback\x1b[0m (most recent call last):\r\n  boom\x07\n"));
    expect(tail.text()).toBe("Traceback (most recent call last):\n  boom\\x07");
  });
});
