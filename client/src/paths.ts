/**
 * Where the daemon's socket is, by default, and which socket is this user's own.
 * The one definition: the daemon, the CLI, the lean bridge and every client
 * import it from here, so they cannot disagree; and how a socket is bound at its path, the
 * daemon's and its MCP sockets' alike. Node's fs, os and path only (net's types besides): the
 * lean `mcpool bridge` loads this file before anything else.
 */
import { closeSync, lstatSync, openSync, type Stats } from "node:fs";
import { chmod, rename, stat, unlink } from "node:fs/promises";
import type { Server } from "node:net";
import { userInfo } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";

/**
 * Where systemd (pam_systemd) makes each user's runtime directory, `<base>/<uid>`: what
 * `$XDG_RUNTIME_DIR` names in a login session, and what a host that starts its servers with
 * a trimmed environment (the MCP SDK's default: no `XDG_RUNTIME_DIR`) no longer says.
 */
export const RUNTIME_BASE = "/run/user";

const uid = (): number | undefined => process.getuid?.();

/** lstat, or undefined when there is nothing there or it may not be looked at (EACCES). */
function lstatOrNone(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * A path's device and inode, `dev:ino`, or undefined when nothing is there: what tells a
 * folder or socket made again at the same path from the one that was there.
 */
export function pathIdentity(path: string): string | undefined {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  return stats === undefined ? undefined : `${stats.dev}:${stats.ino}`;
}

/**
 * pathIdentity(path), held to stay that folder's alone: a folder removed and made again at
 * once often gets its old inode number back (ext4 does), so a `dev:ino` taken before cannot
 * tell the new folder from the old. Until `release()`, an open descriptor keeps the old inode
 * from being given to another. `identity` is undefined when nothing is there.
 * @internal The daemon's own, for its sockets' folders: not part of the client library.
 */
export function heldIdentity(path: string): { identity: string | undefined; release(): void } {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
  } catch {
    // Nothing there (or not ours to open): nothing to hold, and pathIdentity says so.
  }
  const identity = pathIdentity(path);
  return {
    identity,
    release: () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

/**
 * `<base>/<uid>` when it is what systemd makes it: a real directory (not a symlink), owned
 * by this uid, mode 0700. Else undefined: a directory anyone else made or can enter is not
 * this user's runtime directory.
 */
export function userRuntimeDir(base: string = RUNTIME_BASE): string | undefined {
  const id = uid();
  if (id === undefined) return undefined;
  const dir = join(base, String(id));
  const stats = lstatOrNone(dir);
  if (stats === undefined || !stats.isDirectory()) return undefined;
  return stats.uid === id && (stats.mode & 0o777) === 0o700 ? dir : undefined;
}

/**
 * `$MCPOOL_SOCKET`, else `$XDG_RUNTIME_DIR/mcpool/mcpool.sock`, else the same in systemd's
 * runtime directory for this user when there is one (`/run/user/<uid>`, see
 * {@link userRuntimeDir}: the variable is often stripped, the directory is still there),
 * else `/tmp/mcpool-<uid>/mcpool.sock`.
 *
 * The last fallback is a fixed `/tmp` path keyed by uid rather than env-paths' temp dir
 * (`os.tmpdir()`, which follows `$TMPDIR`): a daemon started by a service manager and an
 * agent started from a shell often see different `$TMPDIR`s, and must still meet. The
 * daemon creates the directory 0700 and refuses one owned by someone else.
 *
 * `runtimeBase`: where systemd's runtime directories are (tests give their own).
 */
export function defaultSocketPath(
  env: NodeJS.ProcessEnv = process.env,
  runtimeBase: string = RUNTIME_BASE,
): string {
  const explicit = env.MCPOOL_SOCKET;
  if (explicit !== undefined && explicit !== "") return explicit;
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime !== undefined && isAbsolute(runtime)) return join(runtime, "mcpool", "mcpool.sock");
  const systemd = userRuntimeDir(runtimeBase);
  if (systemd !== undefined) return join(systemd, "mcpool", "mcpool.sock");
  const user = uid() ?? userInfo().username;
  return join("/tmp", `mcpool-${user}`, "mcpool.sock");
}

/**
 * This user's own socket, the only one an auto-start may start a daemon for: the one named
 * (an entry's or a command's `--socket`, `connect({ socketPath })`), else
 * {@link defaultSocketPath} (`$MCPOOL_SOCKET`, then the discovery above).
 */
export function ownSocketPath(
  named: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  runtimeBase: string = RUNTIME_BASE,
): string {
  return named !== undefined && named !== "" ? named : defaultSocketPath(env, runtimeBase);
}

/**
 * Why a daemon must not be started for `socketPath`, or undefined when it may: the nearest
 * folder of the socket that exists belongs to another user (and is not a shared sticky one
 * like `/tmp`) — the socket is theirs, e.g. a `$XDG_RUNTIME_DIR` that `sudo` kept.
 */
export function foreignSocketFolder(socketPath: string): string | undefined {
  const id = uid();
  if (id === undefined) return undefined;
  for (let dir = dirname(resolve(socketPath)); ; dir = dirname(dir)) {
    const stats = lstatOrNone(dir);
    if (stats !== undefined) {
      const shared = (stats.mode & 0o1000) !== 0 && (stats.mode & 0o002) !== 0;
      if (stats.uid === id || shared) return undefined;
      return `${dir} belongs to uid ${stats.uid}, not to this user (uid ${id})`;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The longest socket path `bind(2)` takes on a platform, in bytes: `sun_path` (108 on Linux,
 * 104 on macOS and the BSDs) less its terminating NUL. The one rule for every socket mcpool
 * binds or dials: the daemon's own, its MCP sockets, the lean bridge's.
 * @internal The daemon's and the bridge's own: not part of the client library.
 */
export function socketPathLimit(platform: NodeJS.Platform = process.platform): number {
  return platform === "linux" || platform === "android" ? 107 : 103;
}

/**
 * Pids fit in 22 bits on Linux (its largest `pid_max`) and under 100,000 on macOS and the
 * BSDs; the count of binds takes the 9 bits below them, so a tag is at most 2^31 - 1: six
 * base-36 digits. The count goes round after 512 binds, long after the first one is done.
 */
const PID_BITS = 22;
const COUNT_BITS = 9;

/**
 * The tag of one bind: six base-36 digits made of this process's pid and the bind's count,
 * fixed in width so the temporary name's length never grows with the pid or the daemon's age.
 * @internal The daemon's own, for binding its sockets: not part of the client library.
 */
export function bindTag(pid: number, count: number): string {
  const pidPart = pid % 2 ** PID_BITS;
  const countPart = count % 2 ** COUNT_BITS;
  return (pidPart * 2 ** COUNT_BITS + countPart).toString(36).padStart(6, "0");
}

/**
 * A temporary name bindByRename makes: `….<tag>.tmp` (beside its path, or the hidden one in
 * its folder), or the bare tag, six base-36 digits (the shortest, in its folder).
 * @internal The daemon's own, for binding its sockets: not part of the client library.
 */
export function isTemporarySocketName(name: string): boolean {
  return /\.[0-9a-z]{6}\.tmp$/.test(name) || /^[0-9a-z]{6}$/.test(name);
}

/**
 * A socket path, or the temporary name it is bound under, that does not fit in `sun_path`.
 * @internal The daemon's own, for binding its sockets: not part of the client library.
 */
export class SocketPathTooLongError extends Error {
  override readonly name = "SocketPathTooLongError";
  readonly code = "socket-path-too-long";

  constructor(
    readonly path: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `cannot bind ${path}: its temporary name needs ${bytes} bytes, over the ${limit}-byte ` +
        `limit of a Unix socket address (choose a shorter socket path)`,
    );
  }
}

/**
 * The name a socket at `path` is bound under before it is renamed into place: beside it when
 * that fits in `limit` bytes (`sun_path`), else a short hidden name in its folder (11 bytes,
 * as long as `mcpool.sock`, so a daemon socket path that fits has a temporary name that fits),
 * else the bare tag in its folder (6 bytes, as long as the shortest MCP socket's name,
 * `a.sock`: every MCP socket path that fits has a temporary name that fits).
 * `tag` (bindTag) keeps binds apart: no two binds, in one process or two, share a name.
 * Throws SocketPathTooLongError when none fits (a name shorter than six bytes at the limit):
 * Node would bind a truncated name.
 * @internal The daemon's own, for binding its sockets: not part of the client library.
 */
export function temporarySocketName(path: string, limit: number, tag: string): string {
  const beside = `${path}.${tag}.tmp`;
  if (Buffer.byteLength(beside) <= limit) return beside;
  const hidden = join(dirname(path), `.${tag}.tmp`);
  if (Buffer.byteLength(hidden) <= limit) return hidden;
  const bare = join(dirname(path), tag);
  const bytes = Buffer.byteLength(bare);
  if (bytes > limit) throw new SocketPathTooLongError(path, bytes, limit);
  return bare;
}

/** Binds made by this process: the count that makes each one's temporary name its own. */
let binds = 0;

/**
 * `server.listen(target)`, as a promise that rejects with the listen error.
 * @internal The daemon's own, for binding its sockets: not part of the client library.
 */
export function listenOn(server: Server, target: string | { fd: number }): Promise<void> {
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(target, () => {
      server.off("error", fail);
      done();
    });
  });
}

/**
 * Makes `server` listen at `path`: bound under a temporary name of its own
 * (temporarySocketName), made 0600, then renamed over whatever is at `path`, which is atomic:
 * a client never finds a socket it may not use, nor none. libuv unlinks the name a listener
 * was bound at when it closes, so closing this one later never unlinks the path (nor another
 * bind's temporary name). Says the inode bound, so its owner can unlink only its own. On
 * failure the temporary name is gone; the caller closes `server`.
 * @internal The daemon's own, for binding its sockets: not part of the client library.
 */
export async function bindByRename(
  server: Server,
  path: string,
  limit: number,
): Promise<{ dev: number; ino: number }> {
  binds += 1;
  const temporary = temporarySocketName(path, limit, bindTag(process.pid, binds));
  await unlink(temporary).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  });
  await listenOn(server, temporary);
  try {
    await chmod(temporary, 0o600);
    const { dev, ino } = await stat(temporary);
    await rename(temporary, path);
    return { dev, ino };
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/**
 * Closes `server`, a listener whose path another has taken over (bindByRename), once it has
 * accepted the connections its backlog holds: a host that connected before the path changed
 * hands waits there, not yet accepted, and closing the listener then resets its connection.
 * The backlog is read by the event loop's poll: two turns of setImmediate straddle one (the
 * first runs after this turn's poll, the second after the next one's), so every connection
 * queued before this call is accepted, and given to the server's handler, before it closes.
 * Resolves once the server has closed (its connections ended too).
 * @internal The daemon's own, for binding its sockets: not part of the client library.
 */
export async function retireListener(server: Server): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
