/**
 * A log only the daemon writes, through a real `mcpool serve`: what a child wrote
 * to stderr is one escaped line of the log, tagged with its server, never an entry of its
 * own; the log file is opened without following a symlink, so one planted at its path is
 * refused (and said so) and its target left untouched.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createLog } from "../../src/daemon/process/logger.js";
import { runCli, type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";

const fleet = useFleet();

// Long enough that no second attempt comes inside a test: the failure is logged once.
const NO_RETRY = { mcpool: { crashBackoffMs: 600_000 } };

/** Where the daemon of `home` keeps its log (XDG_STATE_HOME/mcpool). */
const logPath = (home: TestHome): string => join(home.dir, "state", "mcpool", "mcpool.log");

const readLog = (home: TestHome): string =>
  existsSync(logPath(home)) ? readFileSync(logPath(home), "utf8") : "";

describe("a log only the daemon writes", () => {
  it("shows a forged entry a child wrote to stderr as one escaped line tagged with that child's server", async () => {
    const h = fleet.home("mcpool-flog-");
    h.writeConfig(
      {
        forger: { command: process.execPath, args: [fixture("forge-log.mjs")] },
        victim: { command: process.execPath, args: [fixture("echo.mjs")] },
      },
      NO_RETRY,
    );
    await fleet.daemon(h);
    await waitFor(() => readLog(h).includes("forged entry"), 20_000, "the forger's failure");

    const text = runCli(h, "logs", "-n", "200").stdout;
    const lines = text.split("\n").filter((line) => line.includes("forged entry"));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z \w+ mcpool: forger: /);
      expect(line).toContain(
        "starting up\\n2026-01-01T00:00:00.000Z error mcpool: victim: forged entry\\nlast words",
      );
    }
    expect(
      readLog(h)
        .split("\n")
        .some((line) => line.startsWith("2026-01-01T")),
    ).toBe(false);

    const entries = runCli(h, "logs", "-n", "200", "--json")
      .stdout.trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { server?: string; time: string; message: string });
    const forged = entries.filter((e) => e.message.includes("forged entry"));
    expect(forged.length).toBeGreaterThan(0);
    for (const entry of forged) {
      expect(entry.server).toBe("forger");
      expect(entry.message).not.toContain("\n");
    }
    expect(entries.some((e) => e.time.startsWith("2026-01-01T"))).toBe(false);
    expect(runCli(h, "logs", "--server", "victim", "-n", "200").stdout).not.toContain("forged");
  });

  it("refuses a symlink planted at the log path, leaving its target untouched and saying why", async () => {
    const h = fleet.home("mcpool-flog-");
    h.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
    const target = join(h.dir, "precious.txt");
    writeFileSync(target, "not the daemon's\n");
    mkdirSync(join(h.dir, "state", "mcpool"), { recursive: true, mode: 0o700 });
    symlinkSync(target, logPath(h));

    const daemon = await fleet.daemon(h);
    await waitFor(() => /symbolic link/.test(daemon.stderr()), 20_000, "the refusal");

    expect(readFileSync(target, "utf8")).toBe("not the daemon's\n");
    expect(daemon.stderr()).toContain(logPath(h));
    expect(daemon.stderr()).toMatch(/logging to stderr only/);
    expect(daemon.process.exitCode).toBeNull();
    expect(runCli(h, "status").code).toBe(0);
    expect(readFileSync(target, "utf8")).toBe("not the daemon's\n");
  });

  it("refuses to rotate the log into a symlink planted at its .1, and goes on on stderr only", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpool-flog-"));
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const target = join(dir, "precious.txt");
      writeFileSync(target, "not the daemon's\n");
      symlinkSync(target, join(dir, "mcpool.log.1"));
      const log = createLog(dir, { maxBytes: 200, stderr: false });
      for (let i = 0; i < 10; i++) log.info(`line ${i} ${"x".repeat(40)}`);

      expect(readFileSync(target, "utf8")).toBe("not the daemon's\n");
      expect(lstatSync(join(dir, "mcpool.log.1")).isSymbolicLink()).toBe(true);
      const said = stderr.mock.calls.map(([chunk]) => String(chunk)).join("");
      expect(said).toContain(`refusing to write the log through ${join(dir, "mcpool.log.1")}`);
      expect(said).toContain("logging to stderr only");
      expect(readFileSync(join(dir, "mcpool.log"), "utf8")).not.toContain("line 9");
    } finally {
      stderr.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
