/**
 * `mcpool service install|uninstall|status`: run the daemon under the platform's
 * service manager, a systemd user unit pair on Linux, a LaunchAgent on macOS.
 *
 * `renderUnit` and `servicePlan` are pure: a plan says which files to write or remove and
 * which commands to run. `runService` loads the templates shipped in the package's
 * `systemd/` and `launchd/` directories, carries a plan out (or only prints it), and
 * reports every step through `write`; it never exits the process and never touches stdout.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

import envPaths from "env-paths";

import { EXIT } from "../output/exit-codes.js";
import {
  checkServiceManager,
  CONTROL_CHARACTER,
  RUN_IT_YOURSELF,
  ServiceUnavailableError,
  servicePath,
} from "./env.js";

export { ServiceUnavailableError } from "./env.js";

export type ServiceAction = "install" | "uninstall" | "status";

/** Where things are on this machine; every path absolute. */
export interface ServiceEnv {
  home: string;
  uid: number;
  /** `$XDG_CONFIG_HOME`, unset when undefined; ignored unless absolute, as the XDG spec says. */
  xdgConfigHome?: string | undefined;
  /** The daemon's log directory; launchd writes its stdout/stderr files here. */
  logDir: string;
  /** The node binary the service runs. */
  node: string;
  /** The package's CLI entry, `dist/cli/main.js`. */
  bin: string;
  /** The installing shell's PATH, the base of the service's own (see `servicePath`). */
  path: string;
}

/** The shipped templates, keyed by their path inside the package. */
export interface ServiceTemplates {
  "systemd/mcpool.service": string;
  "systemd/mcpool.socket": string;
  "launchd/dev.mcpool.daemon.plist": string;
}

/**
 * What to do, carried out in this order: create `dirs` (0700), write `files` (0644), run
 * `commands` one after another, delete `remove`. Removal comes last because
 * `systemctl disable` reads the [Install] sections of the unit files it disables.
 */
export interface ServicePlan {
  files: { path: string; content: string }[];
  remove: string[];
  commands: string[][];
  /** Directories the service needs before it starts (launchd's log directory). */
  dirs: string[];
}

export const LAUNCHD_LABEL = "dev.mcpool.daemon";

const SYSTEMD_SERVICE = "mcpool.service";
const SYSTEMD_SOCKET = "mcpool.socket";
/** The file whose presence marks the package root. */
const ROOT_MARKER: keyof ServiceTemplates = "systemd/mcpool.service";

/** `systemctl` and `launchctl` answer in well under a second; a hung bus should not hang us. */
const COMMAND_TIMEOUT_MS = 30_000;

/**
 * This module sits three levels under the package root (src/cli/service or dist/cli/service); allow
 * a little more.
 */
const MAX_ROOT_DEPTH = 4;

/** A command of the plan that failed: its argv, exit status and what it said on stderr. */
export class ServiceCommandError extends Error {
  override readonly name = "ServiceCommandError";
  constructor(
    readonly argv: readonly string[],
    /** The exit status; `null` when the command could not be started or was killed. */
    readonly exitCode: number | null,
    readonly stderr: string,
    options?: { cause?: unknown },
  ) {
    const said = stderr.trim();
    super(
      `\`${formatCommand(argv)}\` failed${exitCode === null ? "" : ` with status ${exitCode}`}` +
        (said === "" ? "" : `: ${said}`),
      options,
    );
  }
}

/**
 * Fills a unit template's `@NODE@`, `@MCPOOL_BIN@`, `@LOG_DIR@` and `@PATH@` (the
 * service's PATH, built from the installing shell's by `servicePath`), escaping each
 * value for the file's syntax: XML for a plist, systemd's quoting and specifier rules
 * otherwise. An unknown placeholder, a relative path or a control character is an error
 * rather than a broken unit.
 */
export function renderUnit(
  template: string,
  vars: { node: string; bin: string; logDir: string; path: string },
): string {
  for (const [name, value] of [
    ["node", vars.node],
    ["bin", vars.bin],
    ["logDir", vars.logDir],
  ] as const) {
    if (!isAbsolute(value)) throw new Error(`${name} must be an absolute path, got "${value}"`);
    if (CONTROL_CHARACTER.test(value)) {
      throw new Error(`${name} contains a control character: ${JSON.stringify(value)}`);
    }
  }
  const values: Record<string, string> = {
    NODE: vars.node,
    MCPOOL_BIN: vars.bin,
    LOG_DIR: vars.logDir,
    PATH: servicePath(vars.node, vars.path),
  };
  const lookup = (name: string): string => {
    const value = values[name];
    if (value === undefined) throw new Error(`unknown placeholder @${name}@ in a unit template`);
    return value;
  };
  if (template.trimStart().startsWith("<?xml")) {
    return template.replace(PLACEHOLDER, (_, name: string) => escapeXml(lookup(name)));
  }
  return template
    .split("\n")
    .map((line) =>
      line.replace(PLACEHOLDER, (_, name: string) => systemdValue(line, name, lookup(name))),
    )
    .join("\n");
}

/**
 * A value on one line of a systemd unit. Exec*= lines are split into words, where a value
 * may be quoted whole; an Environment= assignment in the template is quoted already.
 */
function systemdValue(line: string, name: string, value: string): string {
  if (/^\s*Exec\w*\s*=/.test(line)) return systemdExecWord(value);
  if (/^\s*Environment\s*=\s*"/.test(line)) return systemdQuoted(value);
  return systemdPlain(name, value);
}

const PLACEHOLDER = /@([A-Z][A-Z0-9_]*)@/g;

function escapeXml(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/**
 * One argument of an `ExecStart=` command line (systemd.service(5), "Command lines"):
 * `%` starts a specifier and `$` a variable, so both are doubled; a value with a space,
 * quote, backslash or `;` is double-quoted with C-style escapes.
 */
function systemdExecWord(value: string): string {
  const escaped = value.replace(/%/g, "%%").replace(/\$/g, "$$$$");
  if (!/[\s"'\\;]/.test(value)) return escaped;
  return `"${escaped.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/**
 * A value inside a double-quoted `Environment=` assignment: quotes and backslashes are
 * C-escaped, `%` doubled; `$` is not special there (systemd.exec(5), "Environment=").
 */
function systemdQuoted(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%");
}

/** A value inside any other setting, where quoting rules differ from key to key. */
function systemdPlain(name: string, value: string): string {
  if (/[\s"'\\]/.test(value)) {
    throw new Error(
      `@${name}@ is ${JSON.stringify(value)}: a path with spaces, quotes or backslashes ` +
        "can only be used in an Exec line of a systemd unit",
    );
  }
  return value.replace(/%/g, "%%");
}

/**
 * The files and commands that carry out `action` on `platform`. `templates` is needed
 * only to install; when omitted it is read from the package (synchronously, once).
 */
export function servicePlan(
  action: ServiceAction,
  platform: NodeJS.Platform,
  env: ServiceEnv,
  templates?: ServiceTemplates,
): ServicePlan {
  let loaded = templates;
  const render = (name: keyof ServiceTemplates): string =>
    renderUnit((loaded ??= readTemplatesSync())[name], {
      node: env.node,
      bin: env.bin,
      logDir: env.logDir,
      path: env.path,
    });
  switch (platform) {
    case "linux": {
      const configHome =
        env.xdgConfigHome !== undefined && isAbsolute(env.xdgConfigHome)
          ? env.xdgConfigHome
          : join(env.home, ".config");
      const unitDir = join(configHome, "systemd", "user");
      const service = join(unitDir, SYSTEMD_SERVICE);
      const socket = join(unitDir, SYSTEMD_SOCKET);
      const systemctl = (...args: string[]): string[] => ["systemctl", "--user", ...args];
      switch (action) {
        case "install":
          return {
            dirs: [],
            files: [
              { path: service, content: render("systemd/mcpool.service") },
              { path: socket, content: render("systemd/mcpool.socket") },
            ],
            remove: [],
            // Enabling the socket is enough: the first connection starts the service.
            commands: [systemctl("daemon-reload"), systemctl("enable", "--now", SYSTEMD_SOCKET)],
          };
        case "uninstall":
          return {
            dirs: [],
            files: [],
            remove: [service, socket],
            // The reload runs before the files go (see ServicePlan); once stopped and
            // disabled nothing references the units, and systemd notices the unit
            // directory changed the next time it looks them up.
            commands: [
              systemctl("disable", "--now", SYSTEMD_SOCKET, SYSTEMD_SERVICE),
              systemctl("daemon-reload"),
            ],
          };
        case "status":
          return {
            dirs: [],
            files: [],
            remove: [],
            commands: [systemctl("status", SYSTEMD_SERVICE, SYSTEMD_SOCKET, "--no-pager")],
          };
      }
      break;
    }
    case "darwin": {
      const plist = join(env.home, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
      const domain = `gui/${env.uid}`;
      const target = `${domain}/${LAUNCHD_LABEL}`;
      switch (action) {
        case "install":
          return {
            dirs: [env.logDir],
            files: [{ path: plist, content: render("launchd/dev.mcpool.daemon.plist") }],
            remove: [],
            // bootstrap refuses a label that is already loaded, so an older copy is booted
            // out first; that fails when none is loaded, which is fine (see mayFail).
            commands: [
              ["launchctl", "bootout", target],
              ["launchctl", "bootstrap", domain, plist],
            ],
          };
        case "uninstall":
          return {
            dirs: [],
            files: [],
            remove: [plist],
            commands: [["launchctl", "bootout", target]],
          };
        case "status":
          return { dirs: [], files: [], remove: [], commands: [["launchctl", "print", target]] };
      }
      break;
    }
  }
  throw new ServiceUnavailableError(
    `mcpool has no service manager support on ${platform}; ${RUN_IT_YOURSELF}`,
  );
}

/**
 * Whether a failure of this command is expected and harmless: `launchctl bootout` fails
 * when the job is not loaded, which is the state both install and uninstall want.
 */
export function mayFail(argv: readonly string[]): boolean {
  return argv[0] === "launchctl" && argv[1] === "bootout";
}

export interface RunServiceOptions {
  /** Print the plan without writing, removing or running anything. Default false. */
  dryRun?: boolean;
  /** Receives every line of output, without a trailing newline. */
  write(line: string): void;
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  /** Overrides for the paths found from this process (home, uid, node, this package). */
  env?: Partial<ServiceEnv>;
  /** Aborts a running command. */
  signal?: AbortSignal;
}

/**
 * Carries out `action` and reports each step through `options.write`. Resolves to the
 * exit status for the CLI: 0, or for `status` the status command's own (systemctl
 * answers 3 for a stopped unit). A failed step rejects with a `ServiceCommandError`; a
 * machine with no service manager to reach, with a `ServiceUnavailableError`.
 */
export async function runService(
  action: ServiceAction,
  options: RunServiceOptions,
): Promise<number> {
  const { write, dryRun = false, signal } = options;
  const platform = options.platform ?? process.platform;
  const env: ServiceEnv = { ...defaultServiceEnv(), ...options.env };
  const plan = servicePlan(action, platform, env);

  if (dryRun) {
    for (const dir of plan.dirs) write(`would create ${dir}`);
    for (const file of plan.files) {
      write(`would write ${file.path}:`);
      for (const line of file.content.replace(/\n$/, "").split("\n")) write(`  ${line}`);
    }
    for (const argv of plan.commands) write(`would run: ${formatCommand(argv)}`);
    for (const path of plan.remove) write(`would remove ${path}`);
    return 0;
  }

  if (action === "install" && !existsSync(env.bin)) {
    throw new Error(`cannot find the mcpool command at ${env.bin}; install from a built package`);
  }
  if (action === "uninstall" && plan.remove.every((path) => !existsSync(path))) {
    write(`mcpool is not installed as a service (no ${plan.remove.join(", ")})`);
    return 0;
  }
  // Before anything is written: units no manager will load are only clutter.
  await checkServiceManager(platform);

  for (const dir of plan.dirs) await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const file of plan.files) {
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, file.content);
    // writeFile's mode applies only to a new file, and through the umask.
    await chmod(file.path, 0o644);
    write(`wrote ${file.path}`);
  }
  let status: number = EXIT.ok;
  for (const argv of plan.commands) {
    const result = await run(argv, signal);
    if (action === "status") {
      for (const text of [result.stdout, result.stderr]) {
        if (text.trim() !== "") for (const line of text.trimEnd().split("\n")) write(line);
      }
      // systemctl's 3 is "not active", which is our "not running"; any other failure is 1.
      status =
        result.exitCode === 0 ? EXIT.ok : result.exitCode === 3 ? EXIT.notRunning : EXIT.failed;
      continue;
    }
    if (result.exitCode === 0) {
      write(`ran: ${formatCommand(argv)}`);
    } else if (mayFail(argv)) {
      const said = result.stderr.trim();
      write(`${formatCommand(argv)} failed, as expected when the job is not loaded: ${said}`);
    } else {
      throw new ServiceCommandError(argv, result.exitCode, result.stderr, { cause: result.error });
    }
  }
  for (const path of plan.remove) {
    await rm(path, { force: true });
    write(`removed ${path}`);
  }
  if (action === "install") {
    write(
      platform === "linux"
        ? "mcpool.socket is listening; the daemon starts on the first connection"
        : `${LAUNCHD_LABEL} is loaded and starts at login`,
    );
  }
  return status;
}

interface RunResult {
  /** `null` when the command could not be started, timed out or was aborted. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/** Runs argv without a shell; never rejects, so each caller decides what a failure means. */
function run(argv: readonly string[], signal: AbortSignal | undefined): Promise<RunResult> {
  const [file, ...args] = argv;
  if (file === undefined) return Promise.resolve({ exitCode: null, stdout: "", stderr: "" });
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { timeout: COMMAND_TIMEOUT_MS, signal, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ exitCode: 0, stdout, stderr });
        // A numeric code is the exit status; a string one (ENOENT, ABORT_ERR) means it never ran.
        const exitCode = typeof error.code === "number" ? error.code : null;
        resolve({
          exitCode,
          stdout,
          stderr: exitCode === null ? stderr || error.message : stderr,
          error,
        });
      },
    );
  });
}

/** argv as a person would type it, for messages. */
export function formatCommand(argv: readonly string[]): string {
  return argv
    .map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`))
    .join(" ");
}

/** This process's view: its home, uid, node binary and the package's own CLI entry. */
function defaultServiceEnv(): ServiceEnv {
  return {
    home: homedir(),
    uid: process.getuid?.() ?? -1,
    xdgConfigHome: process.env.XDG_CONFIG_HOME,
    logDir: envPaths("mcpool", { suffix: "" }).log,
    node: process.execPath,
    // This module is dist/cli/service/install.js in the package; main.js is in its parent.
    bin: fileURLToPath(new URL("../main.js", import.meta.url)),
    path: process.env.PATH ?? "",
  };
}

/**
 * The package root: the nearest ancestor of this module holding the templates. Both
 * `src/cli/service/install.ts` (tests) and `dist/cli/service/install.js` (installed) are three levels down.
 */
export function packageRoot(moduleUrl: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  const tried: string[] = [];
  for (let depth = 0; depth <= MAX_ROOT_DEPTH; depth++) {
    if (existsSync(join(dir, ROOT_MARKER))) return dir;
    tried.push(dir);
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`cannot find the service templates (${ROOT_MARKER}) in ${tried.join(", ")}`);
}

function readTemplatesSync(): ServiceTemplates {
  const root = packageRoot();
  const read = (name: keyof ServiceTemplates): string => readFileSync(join(root, name), "utf8");
  return {
    "systemd/mcpool.service": read("systemd/mcpool.service"),
    "systemd/mcpool.socket": read("systemd/mcpool.socket"),
    "launchd/dev.mcpool.daemon.plist": read("launchd/dev.mcpool.daemon.plist"),
  };
}
