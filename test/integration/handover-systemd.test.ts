/**
 * `systemctl --user reload mcpool` under a real systemd user manager: the unit's
 * ExecReload hands the daemon over, and systemd takes the new daemon as the service's main
 * pid (the old one sends `MAINPID=`), with the running server still in the unit's cgroup.
 * A user manager runs here only as root, with `unshare`, and with systemd installed: the
 * manager is started in a private mount namespace (test/fixtures/systemd-user-reload.sh).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { onPath } from "../../src/cli/service/env.js";
import { cliPath } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, fixture } from "../helpers/processes.js";

const fleet = useFleet();

const canRunUserManager =
  process.platform === "linux" &&
  process.getuid?.() === 0 &&
  existsSync("/lib/systemd/systemd") &&
  onPath("systemctl") !== undefined &&
  onPath("unshare") !== undefined;

/** The fixture's run under a user manager, for a home whose mcp.json has `servers`: its lines. */
function reloadAndStop(servers: Record<string, unknown>): {
  said: Record<string, string>;
  output: string;
} {
  const h = fleet.home();
  const config = join(h.dir, "config", "mcpool");
  mkdirSync(config, { recursive: true });
  writeFileSync(join(config, "mcp.json"), JSON.stringify({ mcpServers: servers }));
  const none = Object.keys(servers).length === 0 ? ["none"] : [];
  const run = spawnSync(
    "unshare",
    ["-m", fixture("systemd-user-reload.sh"), h.dir, cliPath, ...none],
    { encoding: "utf8", timeout: 120_000 },
  );
  const said = Object.fromEntries(
    run.stdout
      .split("\n")
      .filter((line) => line.includes(": "))
      .map((line) => line.split(": ", 2) as [string, string]),
  );
  return { said, output: run.stdout + run.stderr };
}

describe.runIf(canRunUserManager)("a hand-over under a real systemd user manager", () => {
  it("reloads into a new daemon that systemd tracks as the main pid, with the same child", () => {
    const counter = { command: process.execPath, args: [fixture("counter.mjs")] };
    const { said, output } = reloadAndStop({ counter });
    expect(said.error, output).toBeUndefined();
    const before = Number(said["daemon-before"]);
    const after = Number(said["daemon-after"]);
    expect(before).toBeGreaterThan(0);
    expect(Number(said["mainpid-before"])).toBe(before);
    expect(said.reload).toBe("0");
    expect(after).not.toBe(before);
    expect(Number(said["handed-from"])).toBe(before);
    expect(Number(said["mainpid-after"])).toBe(after);
    expect(said["child-after"]).toBe(said["child-before"]);
    expect(said["cgroup-after"]).toMatch(/mcpool\.service$/);
    expect(said.stop).toBe("0");
    // A unit left `failed` is explained by the Result and ExecMainStatus lines in stdout.
    expect(said["state-after-stop"], output).toBe("inactive");
    expect(said["manager-exit"]).toBe("0");
    expect(alive(after) || alive(Number(said["child-after"]))).toBe(false);
  });

  it("waits at a stop for the new daemon to stop, alone in the unit", () => {
    // No server: the new daemon is all a stop finds. systemd waits only for a main process that
    // is its own child; one that is not (the old daemon's child when it was named) it SIGKILLs.
    const { said, output } = reloadAndStop({});
    expect(said.error, output).toBeUndefined();
    expect(said.reload).toBe("0");
    const after = Number(said["daemon-after"]);
    expect(after).not.toBe(Number(said["daemon-before"]));
    expect(Number(said["mainpid-after"])).toBe(after);
    expect(said.stop).toBe("0");
    expect(said["state-after-stop"], output).toBe("inactive");
    expect(said["manager-exit"]).toBe("0");
    expect(alive(after)).toBe(false);
  });
});
