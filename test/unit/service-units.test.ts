/**
 * The service units shipped in `systemd/` and `launchd/` and the plans
 * `mcpool service` builds from them. The systemd units are read with a small INI parser
 * and checked key by key; where `systemd-analyze` is installed the rendered units are also
 * run through `systemd-analyze verify --user`, so systemd itself judges every key.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { afterAll, describe, expect, it } from "vitest";

import {
  mayFail,
  packageRoot,
  renderUnit,
  runService,
  servicePlan,
  type ServiceEnv,
  type ServiceTemplates,
} from "../../src/cli/service/install.js";
import { onPath, servicePath } from "../../src/cli/service/env.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const templates: ServiceTemplates = {
  "systemd/mcpool.service": readFileSync(join(ROOT, "systemd/mcpool.service"), "utf8"),
  "systemd/mcpool.socket": readFileSync(join(ROOT, "systemd/mcpool.socket"), "utf8"),
  "launchd/dev.mcpool.daemon.plist": readFileSync(
    join(ROOT, "launchd/dev.mcpool.daemon.plist"),
    "utf8",
  ),
};

/** A shell PATH as nvm and pipx leave it, with a relative entry and a duplicate. */
const SHELL_PATH =
  "/home/ada/.nvm/versions/node/v20.19.0/bin:/home/ada/.local/bin:.:/usr/bin:/home/ada/.local/bin";

const VARS = {
  node: "/usr/local/bin/node",
  bin: "/opt/mcpool/dist/cli/main.js",
  logDir: "/home/ada/.local/state/mcpool",
  path: SHELL_PATH,
};

/** The service's PATH from VARS: node's directory (absent from SHELL_PATH), the shell's, the base. */
const SERVICE_PATH =
  "/usr/local/bin:/home/ada/.nvm/versions/node/v20.19.0/bin:/home/ada/.local/bin:/usr/bin:" +
  "/opt/homebrew/bin:/bin:/usr/sbin:/sbin";

const LINUX_ENV: ServiceEnv = { home: "/home/ada", uid: 1000, ...VARS };
const DARWIN_ENV: ServiceEnv = {
  home: "/Users/ada",
  uid: 501,
  node: "/opt/homebrew/bin/node",
  bin: "/opt/homebrew/lib/node_modules/mcpool/dist/cli/main.js",
  logDir: "/Users/ada/Library/Logs/mcpool",
  path: "/Users/ada/.volta/bin:/opt/homebrew/bin:/usr/bin:/bin",
};

/** `[Section]` → the `Key=value` pairs in order; a key may repeat (Environment=). */
type Ini = Map<string, Array<[string, string]>>;

/**
 * The subset of systemd's unit syntax the units use: `#`/`;` comment lines, `[Section]`
 * headers, `Key=value` with whitespace around `=` dropped, backslash line continuation.
 */
function parseIni(text: string): Ini {
  const sections: Ini = new Map();
  let current: Array<[string, string]> | undefined;
  const lines = text.replace(/\\\n/g, " ").split("\n");
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      current = [];
      sections.set(header[1] as string, current);
      continue;
    }
    const pair = /^([A-Za-z][A-Za-z0-9]*)\s*=\s*(.*)$/.exec(line);
    if (!pair || !current) throw new Error(`line ${index + 1} is not a key in a section: ${raw}`);
    current.push([pair[1] as string, pair[2] as string]);
  }
  return sections;
}

function valuesOf(ini: Ini, section: string, key: string): string[] {
  return (ini.get(section) ?? []).filter(([k]) => k === key).map(([, v]) => v);
}

/** Options that sandbox the daemon and, through inheritance, every MCP server it spawns. */
const FORBIDDEN_HARDENING = [
  "ProtectSystem",
  "ProtectHome",
  "NoNewPrivileges",
  "PrivateTmp",
  "MemoryDenyWriteExecute",
  "RestrictNamespaces",
  "SystemCallFilter",
];

/** A plist's top-level `<key>K</key>` followed by its value element, comments removed. */
function plistValue(plist: string, key: string): string | undefined {
  const body = plist.replace(/<!--[\s\S]*?-->/g, "");
  const match = new RegExp(
    `<key>${key}</key>\\s*(<(true|false)\\s*/>|<(string|integer)>[^<]*</\\3>|<dict>[\\s\\S]*?</dict>|<array>[\\s\\S]*?</array>)`,
  ).exec(body);
  return match?.[1]?.replace(/\s+/g, "");
}

describe("systemd/mcpool.service", () => {
  const unit = parseIni(templates["systemd/mcpool.service"]);

  it("is a simple service whose readiness is the socket unit's listener", () => {
    expect(valuesOf(unit, "Service", "Type")).toEqual(["simple"]);
  });

  it("reloads by handing the servers to a new daemon, which systemd is told is the main pid", () => {
    expect(valuesOf(unit, "Service", "ExecReload")).toEqual(["@NODE@ @MCPOOL_BIN@ restart"]);
    // The MAINPID= message comes from systemd-notify, not from the main process.
    expect(valuesOf(unit, "Service", "NotifyAccess")).toEqual(["all"]);
  });

  it("kills the whole control group, restarts on failure and keeps files private", () => {
    expect(valuesOf(unit, "Service", "KillMode")).toEqual(["control-group"]);
    expect(valuesOf(unit, "Service", "Restart")).toEqual(["on-failure"]);
    expect(valuesOf(unit, "Service", "RestartSec")).toEqual(["2"]);
    expect(valuesOf(unit, "Service", "UMask")).toEqual(["0077"]);
    expect(valuesOf(unit, "Service", "TimeoutStopSec")).toEqual(["15"]);
  });

  it("runs with the installing shell's PATH and forces no NODE_ENV on the servers", () => {
    const environment = valuesOf(unit, "Service", "Environment");
    expect(environment).toContain('"PATH=@PATH@"');
    expect(environment.join("\n")).not.toMatch(/NODE_ENV/);
  });

  it("runs `serve` through the placeholders the installer fills", () => {
    expect(valuesOf(unit, "Service", "ExecStart")).toEqual(["@NODE@ @MCPOOL_BIN@ serve"]);
  });

  it("starts with its socket and is wanted by the default target", () => {
    expect(valuesOf(unit, "Unit", "Requires")).toContain("mcpool.socket");
    expect(valuesOf(unit, "Unit", "After")).toContain("mcpool.socket");
    expect(valuesOf(unit, "Install", "WantedBy")).toEqual(["default.target"]);
  });

  it.each(FORBIDDEN_HARDENING)("does not set %s, which would bind every spawned server", (key) => {
    for (const [section, pairs] of unit) {
      expect(
        pairs.map(([k]) => k),
        `[${section}]`,
      ).not.toContain(key);
    }
  });
});

describe("systemd/mcpool.socket", () => {
  const unit = parseIni(templates["systemd/mcpool.socket"]);

  it("listens in the user's runtime directory, reachable by the user alone", () => {
    expect(valuesOf(unit, "Socket", "ListenStream")).toEqual(["%t/mcpool/mcpool.sock"]);
    expect(valuesOf(unit, "Socket", "SocketMode")).toEqual(["0600"]);
    expect(valuesOf(unit, "Socket", "DirectoryMode")).toEqual(["0700"]);
  });

  it("hands one listening socket to the service instead of one per connection", () => {
    expect(valuesOf(unit, "Socket", "Accept")).not.toContain("yes");
    expect(valuesOf(unit, "Install", "WantedBy")).toEqual(["sockets.target"]);
  });
});

describe("launchd/dev.mcpool.daemon.plist", () => {
  const plist = templates["launchd/dev.mcpool.daemon.plist"];

  it("names the job and runs `serve --keeper` through the placeholders", () => {
    expect(plistValue(plist, "Label")).toBe("<string>dev.mcpool.daemon</string>");
    // The keeper follows the daemon across hand-over restarts (handover-keeper.test.ts).
    expect(plistValue(plist, "ProgramArguments")).toBe(
      "<array><string>@NODE@</string><string>@MCPOOL_BIN@</string><string>serve</string><string>--keeper</string></array>",
    );
  });

  it("starts at load and is relaunched after a failure only", () => {
    expect(plistValue(plist, "RunAtLoad")).toBe("<true/>");
    expect(plistValue(plist, "KeepAlive")).toBe("<dict><key>SuccessfulExit</key><false/></dict>");
  });

  it("runs with the installing shell's PATH and no NODE_ENV", () => {
    expect(plistValue(plist, "EnvironmentVariables")).toBe(
      "<dict><key>PATH</key><string>@PATH@</string></dict>",
    );
  });

  it("logs into the log directory, runs in the background with umask 0077", () => {
    expect(plistValue(plist, "StandardOutPath")).toBe("<string>@LOG_DIR@/mcpool.out.log</string>");
    expect(plistValue(plist, "StandardErrorPath")).toBe(
      "<string>@LOG_DIR@/mcpool.err.log</string>",
    );
    expect(plistValue(plist, "ProcessType")).toBe("<string>Background</string>");
    expect(plistValue(plist, "Umask")).toBe(`<integer>${0o077}</integer>`);
  });
});

describe("renderUnit", () => {
  it.each(Object.keys(templates) as (keyof ServiceTemplates)[])(
    "leaves no placeholder in %s",
    (name) => {
      const rendered = renderUnit(templates[name], VARS);
      expect(rendered).not.toMatch(/@[A-Z][A-Z0-9_]*@/);
    },
  );

  it("writes absolute paths into ExecStart and the plist", () => {
    const service = parseIni(renderUnit(templates["systemd/mcpool.service"], VARS));
    expect(valuesOf(service, "Service", "ExecStart")).toEqual([
      "/usr/local/bin/node /opt/mcpool/dist/cli/main.js serve",
    ]);
    const plist = renderUnit(templates["launchd/dev.mcpool.daemon.plist"], VARS);
    expect(plistValue(plist, "StandardErrorPath")).toBe(
      "<string>/home/ada/.local/state/mcpool/mcpool.err.log</string>",
    );
  });

  it("writes the installing shell's PATH, node's directory first, into the unit and the plist", () => {
    const service = parseIni(renderUnit(templates["systemd/mcpool.service"], VARS));
    expect(valuesOf(service, "Service", "Environment")).toContain(`"PATH=${SERVICE_PATH}"`);
    const plist = renderUnit(templates["launchd/dev.mcpool.daemon.plist"], VARS);
    expect(plistValue(plist, "EnvironmentVariables")).toBe(
      `<dict><key>PATH</key><string>${SERVICE_PATH}</string></dict>`,
    );
  });

  it("escapes a PATH entry with a space, quote, backslash or % for systemd and XML", () => {
    const path = '/home/ada/My Tools/bin:/opt/100%/"q"\\x:/opt/a&b';
    const service = renderUnit(templates["systemd/mcpool.service"], { ...VARS, path });
    expect(valuesOf(parseIni(service), "Service", "Environment")).toContain(
      '"PATH=/usr/local/bin:/home/ada/My Tools/bin:/opt/100%%/\\"q\\"\\\\x:/opt/a&b:' +
        '/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin"',
    );
    const plist = renderUnit(templates["launchd/dev.mcpool.daemon.plist"], { ...VARS, path });
    expect(plistValue(plist, "EnvironmentVariables")).toContain(
      "<string>/usr/local/bin:/home/ada/MyTools/bin:/opt/100%/&quot;q&quot;\\x:/opt/a&amp;b:",
    );
  });

  it("quotes a path with a space and escapes systemd's % and $ in ExecStart", () => {
    const rendered = renderUnit(templates["systemd/mcpool.service"], {
      ...VARS,
      bin: "/home/ada/my tools/100%/$HOME/main.js",
    });
    expect(valuesOf(parseIni(rendered), "Service", "ExecStart")).toEqual([
      '/usr/local/bin/node "/home/ada/my tools/100%%/$$HOME/main.js" serve',
    ]);
  });

  it("escapes XML metacharacters in the plist", () => {
    const rendered = renderUnit(templates["launchd/dev.mcpool.daemon.plist"], {
      ...VARS,
      bin: "/Users/a&b/<x>/main.js",
    });
    expect(rendered).toContain("<string>/Users/a&amp;b/&lt;x&gt;/main.js</string>");
  });

  it("refuses a relative path, a newline and an unknown placeholder", () => {
    const service = templates["systemd/mcpool.service"];
    expect(() => renderUnit(service, { ...VARS, node: "node" })).toThrow(/absolute/);
    expect(() => renderUnit(service, { ...VARS, bin: "/x\nExecStartPre=/bin/sh" })).toThrow(
      /control character/,
    );
    expect(() => renderUnit("ExecStart=@NOPE@", VARS)).toThrow(/@NOPE@/);
  });
});

describe("servicePath", () => {
  it("keeps the shell's order, dropping what a unit cannot hold or the service cannot use", () => {
    expect(servicePath("/n/bin/node", "/a:relative::/b\n:/a:/n/bin")).toBe(
      "/a:/n/bin:/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
    );
  });

  it("puts the installing node's directory first when the shell's PATH lacks it", () => {
    expect(servicePath("/n/bin/node", "/a:/usr/bin")).toBe(
      "/n/bin:/a:/usr/bin:/opt/homebrew/bin:/usr/local/bin:/bin:/usr/sbin:/sbin",
    );
  });
});

describe("servicePlan", () => {
  const unitDir = "/home/ada/.config/systemd/user";

  it("installs the systemd unit pair and enables the socket on linux", () => {
    const plan = servicePlan("install", "linux", LINUX_ENV, templates);
    expect(plan.files.map((file) => file.path)).toEqual([
      `${unitDir}/mcpool.service`,
      `${unitDir}/mcpool.socket`,
    ]);
    expect(plan.files[0]?.content).toBe(renderUnit(templates["systemd/mcpool.service"], VARS));
    expect(plan.commands).toEqual([
      ["systemctl", "--user", "daemon-reload"],
      ["systemctl", "--user", "enable", "--now", "mcpool.socket"],
    ]);
    expect(plan.remove).toEqual([]);
  });

  it("puts the units under an absolute XDG_CONFIG_HOME, and ignores a relative one", () => {
    const xdg = servicePlan("install", "linux", { ...LINUX_ENV, xdgConfigHome: "/cfg" }, templates);
    expect(xdg.files.map((file) => file.path)).toEqual([
      "/cfg/systemd/user/mcpool.service",
      "/cfg/systemd/user/mcpool.socket",
    ]);
    const relative = servicePlan(
      "install",
      "linux",
      { ...LINUX_ENV, xdgConfigHome: "cfg" },
      templates,
    );
    expect(relative.files[0]?.path).toBe(`${unitDir}/mcpool.service`);
  });

  it("disables and stops both units before removing them on linux", () => {
    const plan = servicePlan("uninstall", "linux", LINUX_ENV);
    expect(plan.commands).toEqual([
      ["systemctl", "--user", "disable", "--now", "mcpool.socket", "mcpool.service"],
      ["systemctl", "--user", "daemon-reload"],
    ]);
    expect(plan.remove).toEqual([`${unitDir}/mcpool.service`, `${unitDir}/mcpool.socket`]);
    expect(plan.files).toEqual([]);
  });

  it("asks systemctl for both units' status on linux", () => {
    expect(servicePlan("status", "linux", LINUX_ENV).commands).toEqual([
      ["systemctl", "--user", "status", "mcpool.service", "mcpool.socket", "--no-pager"],
    ]);
  });

  it("writes the LaunchAgent, boots out an old copy and bootstraps it on darwin", () => {
    const plistPath = "/Users/ada/Library/LaunchAgents/dev.mcpool.daemon.plist";
    const plan = servicePlan("install", "darwin", DARWIN_ENV, templates);
    expect(plan.files.map((file) => file.path)).toEqual([plistPath]);
    expect(plan.files[0]?.content).toContain(`<string>${DARWIN_ENV.bin}</string>`);
    expect(plan.dirs).toEqual([DARWIN_ENV.logDir]);
    expect(plan.commands).toEqual([
      ["launchctl", "bootout", "gui/501/dev.mcpool.daemon"],
      ["launchctl", "bootstrap", "gui/501", plistPath],
    ]);
    expect(mayFail(plan.commands[0] as string[])).toBe(true);
    expect(mayFail(plan.commands[1] as string[])).toBe(false);
  });

  it("boots out and removes the LaunchAgent, and prints it for status, on darwin", () => {
    const uninstall = servicePlan("uninstall", "darwin", DARWIN_ENV);
    expect(uninstall.commands).toEqual([["launchctl", "bootout", "gui/501/dev.mcpool.daemon"]]);
    expect(uninstall.remove).toEqual(["/Users/ada/Library/LaunchAgents/dev.mcpool.daemon.plist"]);
    expect(servicePlan("status", "darwin", DARWIN_ENV).commands).toEqual([
      ["launchctl", "print", "gui/501/dev.mcpool.daemon"],
    ]);
  });

  it.each(["win32", "freebsd"] as const)("refuses %s and points at `mcpool serve`", (platform) => {
    expect(() => servicePlan("install", platform, LINUX_ENV, templates)).toThrow(
      new RegExp(`no service manager support on ${platform}.*mcpool serve`),
    );
  });
});

describe("runService", () => {
  it("finds the templates from the module's own location", () => {
    expect(packageRoot()).toBe(ROOT.replace(/\/$/, ""));
  });

  it("only prints the plan in a dry run", async () => {
    const home = join(tmpdir(), `mcpool-service-dry-${process.pid}`);
    const lines: string[] = [];
    const status = await runService("install", {
      dryRun: true,
      write: (line) => lines.push(line),
      platform: "linux",
      env: { ...LINUX_ENV, home, xdgConfigHome: undefined },
    });
    expect(status).toBe(0);
    expect(lines).toContain(`would write ${home}/.config/systemd/user/mcpool.service:`);
    expect(lines).toContain("  ExecStart=/usr/local/bin/node /opt/mcpool/dist/cli/main.js serve");
    expect(lines).toContain("would run: systemctl --user enable --now mcpool.socket");
    expect(existsSync(home)).toBe(false);
  });
});

describe("the rendered systemd units", () => {
  const analyze = onPath("systemd-analyze");
  const dir = mkdtempSync(join(tmpdir(), "mcpool-units-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Renders both units into `dir/name/`, ExecStart on /usr/bin/env, which exists everywhere. */
  function renderInto(name: string, extraServiceLine = ""): { service: string; socket: string } {
    const unitDir = join(dir, name);
    mkdirSync(unitDir, { recursive: true });
    // A PATH systemd must take quoted: a space, a quote, a backslash and a specifier.
    const path = `${join(unitDir, "my tools")}:/opt/100%/"q"\\x:/usr/bin`;
    const vars = { node: "/usr/bin/env", bin: join(unitDir, "main.js"), logDir: unitDir, path };
    const service = join(unitDir, "mcpool.service");
    const socket = join(unitDir, "mcpool.socket");
    writeFileSync(
      service,
      renderUnit(templates["systemd/mcpool.service"], vars).replace(
        "[Service]\n",
        `[Service]\n${extraServiceLine}`,
      ),
    );
    writeFileSync(socket, renderUnit(templates["systemd/mcpool.socket"], vars));
    return { service, socket };
  }

  /** `systemd-analyze verify --user` with a private runtime dir and home, as in CI. */
  function verify(units: { service: string; socket: string }): {
    status: number | null;
    stderr: string;
  } {
    const runtime = join(dir, "runtime");
    mkdirSync(runtime, { recursive: true, mode: 0o700 });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      XDG_RUNTIME_DIR: runtime,
      HOME: join(dir, "home"),
    };
    delete env.XDG_CONFIG_HOME;
    const result = spawnSync(analyze as string, ["verify", "--user", units.service, units.socket], {
      encoding: "utf8",
      env,
      timeout: 20_000,
    });
    return { status: result.status, stderr: result.stderr };
  }

  it("pass systemd-analyze verify, or the INI checks where systemd-analyze is not installed", () => {
    const units = renderInto("clean");
    if (analyze === undefined) {
      // No systemd-analyze on this machine: the INI checks above are the check. Here the
      // rendered copies must still parse and keep the keys that matter.
      const service = parseIni(readFileSync(units.service, "utf8"));
      expect(valuesOf(service, "Service", "ExecStart")[0]).toMatch(/^\/usr\/bin\/env \/\S+ serve$/);
      expect(
        valuesOf(parseIni(readFileSync(units.socket, "utf8")), "Socket", "ListenStream"),
      ).toEqual(["%t/mcpool/mcpool.sock"]);
      return;
    }
    const { status, stderr } = verify(units);
    const aboutOurUnits = stderr
      .split("\n")
      .filter((line) => /mcpool\.(service|socket)/.test(line));
    expect(aboutOurUnits).toEqual([]);
    expect(status, stderr).toBe(0);
  });

  it("are judged by systemd-analyze, which reports a key it does not know", () => {
    const units = renderInto("bogus", "NoSuchOption=1\n");
    if (analyze === undefined) {
      // Without systemd-analyze the INI parser is the judge: it still reads the bad key.
      expect(
        valuesOf(parseIni(readFileSync(units.service, "utf8")), "Service", "NoSuchOption"),
      ).toEqual(["1"]);
      return;
    }
    expect(verify(units).stderr).toMatch(/mcpool\.service:\d+: Unknown key .*NoSuchOption/);
  });
});
