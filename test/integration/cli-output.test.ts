/**
 * The CLI never loses output (test/faults.ts, "A service left running for days"): what
 * `mcpool` prints reaches a pipe whole, however large, and a reader that stops early
 * (`| head`) ends it cleanly — never a silently short result with exit 0. Through a real
 * daemon and real shell pipes: the built CLI runs under `sh -c`, its stdout piped into
 * `wc -c` or `head`.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cliPath,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";

// Several times what a pipe holds (64 KiB on Linux), so a CLI that exits early is cut short.
const ANSWER_CHARS = 300_000;
// Enough tools that `tools --json` is several pipes' worth too.
const MANY_TOOLS = 2000;

/** Runs `script` under `sh -c`; `$MCPOOL` in it runs the built CLI with this node. */
function shell(
  home: TestHome,
  script: string,
): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync("sh", ["-c", script.replaceAll("$MCPOOL", '"$NODE" "$CLI"')], {
    env: { ...home.env, NODE: process.execPath, CLI: cliPath },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("the CLI's output through pipes", () => {
  let home: TestHome;
  let daemon: RunningDaemon;

  beforeAll(async () => {
    home = testHome("mcpool-pipes-");
    home.writeConfig({
      big: { command: process.execPath, args: [fixture("big-answer.mjs")] },
      // echo.mjs has four tools of its own; big-answer.mjs one.
      many: {
        command: process.execPath,
        args: [fixture("echo.mjs")],
        env: { FIXTURE_TOOLS: String(MANY_TOOLS) },
      },
    });
    daemon = await startDaemon(home);
    await waitFor(
      () => {
        const status = shell(home, `$MCPOOL status --json`).stdout;
        return (status.match(/"status": "ready"/g) ?? []).length === 2;
      },
      20_000,
      "both servers to be ready",
    );
  });

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  it("delivers a 300,000-character answer whole to `| wc -c`, and exits 0", () => {
    const status = join(home.dir, "call-status");
    const { stdout, stderr } = shell(
      home,
      `{ $MCPOOL call big__text '{"chars":${ANSWER_CHARS}}'; echo $? > "${status}"; } | wc -c`,
    );
    expect(stderr).toBe("");
    // The answer and its newline.
    expect(Number(stdout.trim())).toBe(ANSWER_CHARS + 1);
    expect(readFileSync(status, "utf8").trim()).toBe("0");
  });

  it("prints `tools --json` to a pipe exactly as to a file", () => {
    const file = join(home.dir, "tools.json");
    expect(shell(home, `$MCPOOL tools --json > "${file}"`).code).toBe(0);
    const size = statSync(file).size;
    expect(JSON.parse(readFileSync(file, "utf8"))).toHaveLength(MANY_TOOLS + 4 + 1);
    expect(size).toBeGreaterThan(2 * 65_536);
    const piped = shell(home, `$MCPOOL tools --json | wc -c`);
    expect(Number(piped.stdout.trim())).toBe(size);
  });

  it("ends quietly with exit 141 when `| head` stops reading, without a stack trace", () => {
    const { stdout, stderr } = shell(
      home,
      `{ $MCPOOL tools --json; echo "exit $?" >&2; } | head -c 10`,
    );
    expect(stdout).toBe("[\n  {\n    ");
    expect(stderr).toBe("exit 141\n");
  });
});
