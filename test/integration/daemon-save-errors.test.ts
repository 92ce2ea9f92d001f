/**
 * A full or read-only data folder (a service left running for
 * weeks): each store's failed save is shown in `status` with the folder and what it costs,
 * until a later save succeeds; no temp file is left behind; calls keep working. The data
 * folder is a 64 KiB tmpfs, filled, then remounted read-only (the test runs as root, where
 * a chmod would not refuse anything).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DaemonStatus } from "mcpool-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";

const mount = (...args: string[]): void => {
  const result = spawnSync("mount", args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`mount ${args.join(" ")}: ${result.stderr}`);
};

function statusOf(home: TestHome): DaemonStatus {
  const result = runCli(home, "status", "--json");
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as DaemonStatus;
}

/** Every file under `dir`, relative. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" });
}

describe("a daemon whose data folder is full, then read-only", () => {
  let home: TestHome;
  let daemon: RunningDaemon | undefined;
  let dataMount = "";
  let mounted = false;

  beforeAll(async () => {
    home = testHome("mcpool-saves-");
    dataMount = join(home.dir, "data");
    mkdirSync(dataMount, { recursive: true });
    mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", dataMount);
    mounted = true;
    for (const dir of ["children", "tools-cache"]) {
      mkdirSync(join(dataMount, "mcpool", dir), { recursive: true, mode: 0o700 });
    }
    try {
      writeFileSync(join(dataMount, "filler"), Buffer.alloc(256 * 1024));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
    }
    home.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
    daemon = await startDaemon(home);
  });

  afterAll(async () => {
    if (mounted) mount("-o", "remount,rw", dataMount);
    await daemon?.stop();
    if (mounted) spawnSync("umount", [dataMount]);
    home?.remove();
  });

  it("shows each failed save with its folder and cost, keeps calling, and leaves no temp file", async () => {
    const children = join(dataMount, "mcpool", "children");
    await waitFor(() => statusOf(home).servers[0]?.status === "ready", 30_000, "echo to be ready");
    const status = statusOf(home);
    expect(status.saveProblems).toContainEqual(
      expect.objectContaining({
        store: "children",
        folder: children,
        code: "ENOSPC",
        effect: "children not recorded: a daemon crash would leave them running",
      }),
    );
    const text = runCli(home, "status").stdout;
    expect(text).toContain(
      `saving  cannot save to ${children} (ENOSPC): children not recorded: a daemon crash would leave them running`,
    );
    const call = runCli(home, "call", "echo__echo", '{"text":"on a full disk"}');
    expect(call.code, call.stderr).toBe(0);
    expect(filesUnder(dataMount).filter((name) => name.endsWith(".tmp"))).toEqual([]);

    // Room again: the next save of the records succeeds, and the problem is gone.
    rmSync(join(dataMount, "filler"));
    expect(runCli(home, "restart", "echo").code).toBe(0);
    await waitFor(
      () => !(statusOf(home).saveProblems ?? []).some((p) => p.store === "children"),
      30_000,
      "the records' problem to clear",
    );

    // Read-only: the same, with the folder's own code.
    mount("-o", "remount,ro", dataMount);
    expect(runCli(home, "restart", "echo").code).toBe(0);
    await waitFor(
      () =>
        (statusOf(home).saveProblems ?? []).some(
          (p) => p.store === "children" && p.code === "EROFS",
        ),
      30_000,
      "the read-only folder in status",
    );
    const again = runCli(home, "call", "echo__echo", '{"text":"read-only"}');
    expect(again.code, again.stderr).toBe(0);
    mount("-o", "remount,rw", dataMount);
    expect(filesUnder(dataMount).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });
});
