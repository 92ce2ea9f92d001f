/**
 * Tool pinning through a real daemon and the real CLI: two fixture servers change
 * after approval — one rewrites a description, one flips destructiveHint — and their tools
 * are withheld until `mcpool approve` writes the new pin into mcp.json. The approved lists
 * live in the daemon's data directory, so `approve --show` still explains after a restart.
 */
import { readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PoolClient, ServerState } from "mcpool-client";
import { resolvePaths } from "../../src/daemon/process/paths.js";
import {
  client,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
  runCli,
} from "../helpers/daemon.js";
import { fixture } from "../helpers/processes.js";

/** Bound on any one wait for the daemon to reach a state, ms. */
const BOUND_MS = 20_000;
/** Each test runs the CLI several times, a Node start each: generous on a loaded machine. */
const TEST_MS = 90_000;

const mcpool = runCli;

/** Resolves with the servers' state once `done` holds, re-checking on every pool event. */
function eventually(
  c: PoolClient,
  done: (servers: readonly ServerState[]) => boolean,
  what: string,
): Promise<readonly ServerState[]> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, servers?: readonly ServerState[]): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      off();
      if (error) reject(error);
      else resolve(servers!);
    };
    const timer = setTimeout(
      () => finish(new Error(`timed out after ${BOUND_MS} ms waiting for ${what}`)),
      BOUND_MS,
    );
    const check = (): void => {
      c.state().then(
        (servers) => (done(servers) ? finish(undefined, servers) : undefined),
        (error: unknown) => finish(error as Error),
      );
    };
    const off = c.onEvent(check);
    check();
  });
}

const byId = (servers: readonly ServerState[], id: string): ServerState =>
  servers.find((s) => s.id === id)!;

const statuses =
  (want: Record<string, ServerState["status"]>) =>
  (servers: readonly ServerState[]): boolean =>
    Object.entries(want).every(([id, status]) => byId(servers, id)?.status === status);

async function toolNames(c: PoolClient): Promise<string[]> {
  return (await c.tools()).map((t) => t.function.name);
}

describe("mcpool approve", { timeout: TEST_MS }, () => {
  let home: TestHome;
  let daemon: RunningDaemon | undefined;
  let c: PoolClient | undefined;
  let notesState: string;
  let tidyState: string;

  beforeAll(async () => {
    home = testHome("mcpool-approve-");
    notesState = join(home.dir, "notes.state");
    tidyState = join(home.dir, "tidy.state");
    const server = (change: string, state: string): string =>
      JSON.stringify({
        command: process.execPath,
        args: [fixture("rug-pull.mjs"), "--change", change, "--state", state],
      });
    mkdirSync(dirname(home.configPath), { recursive: true });
    writeFileSync(
      home.configPath,
      `{
  // Two servers that change after they are approved.
  "mcpServers": {
    "notes": ${server("description", notesState)},
    "tidy": ${server("destructive", tidyState)}, // flips destructiveHint
  },
}
`,
    );
    daemon = await startDaemon(home);
    c = await client(home);
    await eventually(c, statuses({ notes: "ready", tidy: "ready" }), "both servers ready");
  }, TEST_MS);

  afterAll(async () => {
    await c?.close();
    await daemon?.stop();
    home?.remove();
  });

  it("pins an unpinned server's current list on the first approve, keeping the file's comments", async () => {
    const before = await c!.state();
    for (const id of ["notes", "tidy"]) {
      const { code, stdout } = mcpool(home, "approve", id);
      expect(code).toBe(0);
      expect(stdout).toContain(`${id}: not pinned; approving pins these 2 tools`);
      expect(stdout).toMatch(/approved: the 2 tools of \w+ are pinned as/);
    }
    const text = readFileSync(home.configPath, "utf8");
    expect(text).toContain("// Two servers that change after they are approved.");
    expect(text).toContain("// flips destructiveHint");
    for (const id of ["notes", "tidy"]) {
      expect(text).toContain(`"pin": "${byId(before, id).toolsFingerprint}"`);
      const store = join(resolvePaths({ env: home.env }).dataDir, "pins", `${id}.json`);
      expect(statSync(store).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(store, "utf8"))).toMatchObject({
        fingerprint: byId(before, id).toolsFingerprint,
      });
    }
    const after = await eventually(
      c!,
      (servers) => servers.every((s) => s.config.pin !== undefined),
      "the pins to be read",
    );
    expect(after.map((s) => [s.status, s.pid])).toEqual(before.map((s) => ["ready", s.pid]));
    expect(await toolNames(c!)).toEqual([
      "notes__read_notes",
      "notes__tidy_notes",
      "tidy__read_notes",
      "tidy__tidy_notes",
    ]);
  });

  it("withholds both servers' tools once one rewrites a description and the other flips destructiveHint", async () => {
    const servers = await c!.state();
    process.kill(byId(servers, "notes").pid!, "SIGUSR1");
    process.kill(byId(servers, "tidy").pid!, "SIGUSR1");
    const withheld = await eventually(
      c!,
      statuses({ notes: "pin-mismatch", tidy: "pin-mismatch" }),
      "both servers to be withheld",
    );
    expect(byId(withheld, "notes").pinDiff).toEqual({
      added: [],
      removed: [],
      changed: ["read_notes"],
    });
    expect(byId(withheld, "tidy").pinDiff).toEqual({
      added: [],
      removed: [],
      changed: ["tidy_notes"],
    });
    expect(await toolNames(c!)).toEqual([]);
    const call = mcpool(home, "call", "tidy__tidy_notes");
    expect(call.code).toBe(1);
    expect(call.stderr).toContain("mcpool approve tidy");
    const status = mcpool(home, "status");
    expect(status.stdout).toMatch(
      /^notes\s+pin-mismatch\s+\d+\s+\d+s\s+[\d.]+%\s+\d+M\s+\d+\s+2\s+2025-11-25\s+tools withheld/m,
    );
  });

  it("still shows what changed after a daemon restart, and --show writes nothing", async () => {
    await c!.close();
    c = undefined;
    await daemon!.stop();
    daemon = await startDaemon(home);
    c = await client(home);
    await eventually(
      c,
      statuses({ notes: "pin-mismatch", tidy: "pin-mismatch" }),
      "both servers withheld after the restart",
    );
    const text = readFileSync(home.configPath, "utf8");

    const tidy = mcpool(home, "approve", "tidy", "--show");
    expect(tidy.code, tidy.stderr).toBe(0);
    expect(tidy.stdout).toContain("tidy: the tools changed since they were approved");
    expect(tidy.stdout).toMatch(/~ tidy_notes\n\s+destructiveHint: false → true/);
    const notes = mcpool(home, "approve", "notes", "--show");
    expect(notes.code, notes.stderr).toBe(0);
    expect(notes.stdout).toMatch(/~ read_notes\n\s+description: "Reads a note\.(" →|…)/);
    expect(notes.stdout).toContain("~/.ssh/id_rsa");
    const shown = mcpool(home, "approve", "notes", "--show", "--json");
    expect(shown.code, shown.stderr).toBe(0);
    const json = JSON.parse(shown.stdout) as { withheld: boolean; diff: unknown };
    expect(json).toMatchObject({ withheld: true, diff: { changed: ["read_notes"] } });

    expect(readFileSync(home.configPath, "utf8")).toBe(text);
    expect(await toolNames(c!)).toEqual([]);
  });

  it("offers a server's tools again once approved, the new pin written beside the comments", async () => {
    const { code, stdout } = mcpool(home, "approve", "tidy");
    expect(code).toBe(0);
    expect(stdout).toContain("destructiveHint: false → true");
    expect(stdout).toContain("approved: the 2 tools of tidy are pinned as");
    const servers = await c!.state();
    const tidy = byId(servers, "tidy");
    expect(tidy.status).toBe("ready");
    expect(tidy.config.pin).toBe(tidy.toolsFingerprint);
    expect(byId(servers, "notes").status).toBe("pin-mismatch");
    const text = readFileSync(home.configPath, "utf8");
    expect(text).toContain(`"pin": "${tidy.toolsFingerprint}"`);
    expect(text).toContain("// flips destructiveHint");
    expect(await toolNames(c!)).toEqual(["tidy__read_notes", "tidy__tidy_notes"]);
    expect(mcpool(home, "call", "tidy__tidy_notes").stdout.trim()).toBe("tidy_notes done");

    expect(mcpool(home, "approve", "notes").code).toBe(0);
    expect(byId(await c!.state(), "notes").status).toBe("ready");
    expect(await toolNames(c!)).toContain("notes__read_notes");
    const again = mcpool(home, "approve", "notes");
    expect(again.stdout).toContain("the 2 tools match the pin");
    expect(again.stdout).toContain("already matches");
  });

  it("says an unknown server is bad input", () => {
    const { code, stderr } = mcpool(home, "approve", "nobody");
    expect(code).toBe(2);
    expect(stderr).toContain('unknown server "nobody"');
  });
});
