/**
 * Where the daemon lives on disk, and the checks that run before anything listens
 * (test/faults.ts, "The socket and the daemon's identity"). The socket path is mcpool-client's
 * `defaultSocketPath()` unless told otherwise, so the daemon and every client meet. The socket
 * directory must be ours: a symlink is refused (never followed), another user's directory is
 * refused (never chmod'ed), ours but too open is tightened to 0700. A socket path too long for
 * `sun_path` is refused, never silently truncated. Nothing here runs at import time.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import envPaths from "env-paths";
import { defaultSocketPath, socketPathLimit } from "mcpool-client/paths";

const APP_NAME = "mcpool";

export interface PathOptions {
  /** The socket path (`--socket`). Default: `$MCPOOL_SOCKET`, else `defaultSocketPath()`. */
  socket?: string;
  /** The config file (`--config`). Default: `$MCPOOL_CONFIG`, else env-paths' config dir + `mcp.json`. */
  config?: string;
  /** The environment to read. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/** Every location the daemon uses, absolute. */
export interface DaemonPaths {
  readonly socketPath: string;
  readonly socketDir: string;
  readonly configPath: string;
  /** Tools cache, pid records and OAuth tokens (`oauth/`). */
  readonly dataDir: string;
  readonly logDir: string;
  /** The single-instance lock, beside the socket: one daemon per socket. */
  readonly lockPath: string;
  /** The daemon's env file (`<config dir>/env`, env-file.ts), whatever `--config` names. */
  readonly envFilePath: string;
}

export function resolvePaths(options: PathOptions = {}): DaemonPaths {
  const env = options.env ?? process.env;
  const socketPath = resolve(nonEmpty(options.socket) ?? defaultSocketPath(env));
  const socketDir = dirname(socketPath);
  const dirs = userDirs(env);
  const configPath = resolve(
    nonEmpty(options.config) ?? nonEmpty(env.MCPOOL_CONFIG) ?? join(dirs.config, "mcp.json"),
  );
  return {
    socketPath,
    socketDir,
    configPath,
    dataDir: dirs.data,
    logDir: dirs.log,
    lockPath: join(socketDir, "mcpool.lock"),
    envFilePath: join(dirs.config, "env"),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/**
 * env-paths' directories. env-paths reads `process.env` whatever we pass, so for an explicit
 * `env` its XDG variables win, by env-paths' own rule (Linux only: it ignores XDG elsewhere).
 */
function userDirs(env: NodeJS.ProcessEnv): { config: string; data: string; log: string } {
  const paths = envPaths(APP_NAME, { suffix: "" });
  if (env === process.env || process.platform === "darwin" || process.platform === "win32") {
    return paths;
  }
  const xdg = (name: string, fallback: string): string => {
    const base = env[name];
    return base ? join(base, APP_NAME) : fallback;
  };
  return {
    config: xdg("XDG_CONFIG_HOME", paths.config),
    data: xdg("XDG_DATA_HOME", paths.data),
    log: xdg("XDG_STATE_HOME", paths.log),
  };
}

export type DaemonSetupErrorCode =
  "socket-path-too-long" | "symlink-dir" | "not-a-directory" | "foreign-dir" | "shared-dir";

export interface DaemonSetupDetail {
  /** The socket path's length in bytes (UTF-8), and the platform's limit. */
  bytes?: number;
  limit?: number;
  /** The directory's owner, and the uid we run as. */
  ownerUid?: number;
  uid?: number;
  /** The directory's permission bits. */
  mode?: number;
}

/** A location the daemon refuses to use. Thrown before anything listens; `path` names it. */
export class DaemonSetupError extends Error {
  override readonly name = "DaemonSetupError";

  constructor(
    readonly code: DaemonSetupErrorCode,
    readonly path: string,
    message: string,
    readonly detail: DaemonSetupDetail = {},
  ) {
    super(message);
  }
}

/** The longest socket path this platform binds (mcpool-client/paths `socketPathLimit`). */
export const MAX_SOCKET_PATH_BYTES = socketPathLimit();

/** Throws `socket-path-too-long` when `path` does not fit in `sun_path`; counts UTF-8 bytes. */
export function checkSocketPath(path: string, limit = MAX_SOCKET_PATH_BYTES): void {
  const bytes = Buffer.byteLength(path, "utf8");
  if (bytes <= limit) return;
  throw new DaemonSetupError(
    "socket-path-too-long",
    path,
    `socket path is ${bytes} bytes, over the ${limit}-byte limit of a Unix socket address: ${path}` +
      ` (choose a shorter one with --socket or MCPOOL_SOCKET)`,
    { bytes, limit },
  );
}

export interface DirOptions {
  /** The uid the directory must belong to. Default: `process.getuid()`; no check where there is none. */
  uid?: number;
}

export interface PreparedDir {
  /** We made it (and any missing parents), with exactly the requested mode. */
  created: boolean;
  /** It existed, ours, with bits beyond the requested mode, and was chmod'ed down. */
  tightened: boolean;
}

/**
 * The socket directory: created 0700 if absent; if present it must be a real directory (a
 * symlink is refused, not followed), owned by `uid` (else refused and left untouched), and is
 * tightened to 0700 if it is more open. Correct under any umask: modes are set explicitly.
 */
export function prepareRuntimeDir(dir: string, options: DirOptions = {}): PreparedDir {
  return prepare(dir, 0o700, true, options);
}

/**
 * A data or state (log) directory: created with `mode` if absent; if present it must be a
 * real directory of `uid`'s, as the socket directory (a symlink is refused, naming it, and
 * never followed), but its mode is the user's: a directory the daemon did not create is
 * never chmod'ed. What the daemon writes in it is 0600 whatever the folder's mode.
 */
export function prepareDir(dir: string, mode = 0o700, options: DirOptions = {}): PreparedDir {
  return prepare(dir, mode, false, options);
}

const PERMISSION_BITS = 0o7777;

function prepare(path: string, mode: number, tighten: boolean, options: DirOptions): PreparedDir {
  const dir = resolve(path);
  const uid = options.uid ?? process.getuid?.();
  let created = false;
  const existing = lstatSync(dir, { throwIfNoEntry: false });
  if (existing === undefined) {
    const first = mkdirSync(dir, { recursive: true, mode });
    created = first !== undefined;
    // mkdir's mode passes through the umask: set it on every directory we made, parents included.
    if (first !== undefined) {
      for (let parent = dirname(dir); parent.length >= first.length; parent = dirname(parent)) {
        chmodSync(parent, mode);
        if (parent === first || parent === dirname(parent)) break;
      }
    }
  } else if (existing.isSymbolicLink()) {
    throw symlinkRefused(dir);
  }

  // From here on the checks and the chmod go through one descriptor, so a directory swapped
  // for a symlink after the lstat is never followed.
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw symlinkRefused(dir);
    if (code === "ENOTDIR") {
      throw new DaemonSetupError("not-a-directory", dir, `not a directory: ${dir}`);
    }
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    const bits = stat.mode & PERMISSION_BITS;
    if (uid !== undefined && stat.uid !== uid) {
      throw new DaemonSetupError(
        "foreign-dir",
        dir,
        `directory belongs to uid ${stat.uid}, not to us (uid ${uid}); refusing to use it: ${dir}`,
        { ownerUid: stat.uid, uid, mode: bits },
      );
    }
    // A sticky, world-writable directory is a shared one like /tmp (ours when we are root):
    // chmod'ing it would break every other user of the machine.
    if ((bits & 0o1000) !== 0 && (bits & 0o002) !== 0) {
      throw new DaemonSetupError(
        "shared-dir",
        dir,
        `directory is shared (sticky and world-writable); give the socket a directory of its own: ${dir}`,
        { mode: bits },
      );
    }
    if (created ? bits !== mode : tighten && (bits & ~mode) !== 0) {
      fchmodSync(fd, mode);
      return { created, tightened: !created };
    }
    return { created, tightened: false };
  } finally {
    closeSync(fd);
  }
}

function symlinkRefused(dir: string): DaemonSetupError {
  return new DaemonSetupError(
    "symlink-dir",
    dir,
    `directory is a symbolic link; refusing to follow it: ${dir} (replace the link with a directory, or point the variable that names it at the real one)`,
  );
}
