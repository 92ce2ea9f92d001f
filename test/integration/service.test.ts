/**
 * `mcpool service` where there is no service manager to reach: a container, a
 * machine without systemd, `su` or SSH without a user manager. `status` and `install` say
 * so in one plain line on stderr and exit 2, and `install` writes no unit files first.
 * Run through the built CLI, with a PATH without `systemctl`, and with the real
 * `systemctl` pointed at a runtime directory where no user manager listens.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { onPath } from "../../src/cli/service/env.js";
import { cliPath, testHome, type TestHome } from "../helpers/daemon.js";

const ADVICE = "run `mcpool serve` under your own supervisor instead (it stays in the foreground)";

const hasSystemctl = onPath("systemctl") !== undefined;

describe.runIf(process.platform === "linux")("mcpool service without a service manager", () => {
  let home: TestHome;

  beforeAll(() => {
    home = testHome("mcpool-service-");
  });

  afterAll(() => home?.remove());

  function service(action: string, env: NodeJS.ProcessEnv): ReturnType<typeof spawnSync> {
    return spawnSync(process.execPath, [cliPath, "service", action], {
      env,
      encoding: "utf8",
      timeout: 30_000,
    });
  }

  const unitDir = (): string => join(home.dir, "config-xdg", "systemd", "user");

  it.each(["status", "install"])("%s: no systemctl on PATH is one line and exit 2", (action) => {
    const noSystemd = join(home.dir, "bin-without-systemctl");
    mkdirSync(noSystemd, { recursive: true });
    const result = service(action, { ...home.env, PATH: noSystemd });
    expect(result.stderr).toBe(
      `mcpool: systemd is not available here (no \`systemctl\` on PATH); ${ADVICE}\n`,
    );
    expect(result.status).toBe(2);
    expect(result.stdout).toBe("");
    expect(existsSync(unitDir())).toBe(false);
  });

  it.runIf(hasSystemctl).each(["status", "install"])(
    "%s: a systemctl with no user manager to reach is one line and exit 2",
    (action) => {
      const runtime = join(home.dir, "runtime-without-manager");
      mkdirSync(runtime, { recursive: true, mode: 0o700 });
      const env: NodeJS.ProcessEnv = { ...home.env, XDG_RUNTIME_DIR: runtime };
      delete env.DBUS_SESSION_BUS_ADDRESS;
      const result = service(action, env);
      expect(result.stderr).toMatch(
        /^mcpool: no systemd user manager answers for this user \(systemctl --user: [^\n]+\); /,
      );
      expect(result.stderr).toMatch(new RegExp(`; ${escape(ADVICE)}\\n$`));
      expect(result.status).toBe(2);
      expect(result.stdout).toBe("");
      expect(existsSync(unitDir())).toBe(false);
    },
  );
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\`]/g, "\\$&");
}
