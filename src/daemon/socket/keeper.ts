/**
 * The socket is the daemon's to keep, even in a service left running for weeks.
 * A `/tmp` cleaner may delete the socket, or its whole folder, under a daemon that runs for
 * weeks. The keeper watches the socket's folder (to see the socket go) and that folder's
 * parent (to see the folder itself go), with fs watches, no polling; when the socket path is
 * found empty it re-creates the folder (0700, with paths.ts's checks), writes the lock file
 * again and binds the socket anew. `renew()` does the same on demand (SIGUSR1, as tmux does)
 * whatever is at the path. A path that holds something else (another socket, a file) is left
 * alone: only an empty path is taken back, so two daemons never fight over one path.
 */
import { watch, type FSWatcher } from "node:fs";
import { lstat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { heldIdentity, pathIdentity } from "mcpool-client/paths";

import type { PoolLog } from "../../pool/core/types.js";
import { prepareRuntimeDir } from "../process/paths.js";
import type { SocketServer } from "./server.js";

export interface SocketKeeperOptions {
  socketPath: string;
  server: SocketServer;
  /** Writes the instance lock file again if it went with its folder. */
  restoreLock: () => Promise<void>;
  /** After each renewal: what else lives in the folder comes back too. */
  onRenewed?: () => void;
  log: PoolLog;
}

export interface SocketKeeper {
  /**
   * Re-creates the folder and binds the socket again now, `reason` saying why in the log.
   * False (and logged) when it could not, e.g. the folder came back as another user's.
   */
  renew(reason: string): Promise<boolean>;
  /** Stops watching. Idempotent. */
  close(): void;
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Renewals in a row that may lose a race with a removal before one is logged as failed. */
const MAX_RACES = 100;

/** Starts watching at once; the folder must exist and hold the bound socket. */
export function keepSocket(options: SocketKeeperOptions): SocketKeeper {
  const { socketPath, server, restoreLock, onRenewed, log } = options;
  const dir = dirname(socketPath);
  const parent = dirname(dir);
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  let checking = false;
  let again = false;
  let renewing: Promise<boolean> = Promise.resolve(true);
  /** Renewals in a row that lost a race with a removal (raced()). */
  let races = 0;

  /** (Re)arms the watch on `path`, events filtered to the names in `names`. */
  function arm(path: string, names: readonly string[]): void {
    watchers.get(path)?.close();
    watchers.delete(path);
    let watcher: FSWatcher;
    try {
      watcher = watch(path, { persistent: false }, (_event, name) => {
        if (name === null || names.includes(name.toString())) check();
      });
    } catch (error) {
      // The folder went again as it was re-created: the parent's watch, and the look that
      // follows a renewal, see to it.
      if (path === dir && errnoCode(error) === "ENOENT") return;
      log.error?.(
        `mcpool: cannot watch ${path} (${errnoCode(error) ?? String(error)}); \`kill -USR1 ${process.pid}\` re-creates ${socketPath} if it goes`,
      );
      return;
    }
    // The folder itself was removed (the watch ends with it); the parent's watch sees that.
    watcher.on("error", () => {
      watcher.close();
      if (watchers.get(path) === watcher) watchers.delete(path);
      check();
    });
    watchers.set(path, watcher);
  }

  function armAll(): void {
    arm(dir, [basename(socketPath), basename(dir)]);
    arm(parent, [basename(dir)]);
  }

  /** Coalesced: one look at a time, one more if events came during it. */
  function check(): void {
    if (closed) return;
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    void (async () => {
      do {
        again = false;
        if (await pathIsEmpty()) await renew("it was removed", true);
        // The folder may have been replaced under a watch that still looks alive.
        else if (!watchers.has(dir)) armAll();
      } while (again && !closed);
      checking = false;
    })();
  }

  async function pathIsEmpty(): Promise<boolean> {
    try {
      await lstat(socketPath);
      return false;
    } catch (error) {
      const code = errnoCode(error);
      return code === "ENOENT" || code === "ENOTDIR";
    }
  }

  async function renewNow(reason: string, ifEmpty: boolean): Promise<boolean> {
    if (closed) return false;
    // A renewal queued behind another may find the socket back already.
    if (ifEmpty && !(await pathIsEmpty())) return true;
    // The folder made, held through the renewal: one made again meanwhile is told from it.
    let made: ReturnType<typeof heldIdentity> | undefined;
    try {
      prepareRuntimeDir(dir);
      made = heldIdentity(dir);
      await restoreLock();
      if (!(await server.rebind())) return false;
    } catch (error) {
      armAll();
      if (raced(error, made?.identity)) {
        // Removed (or replaced) again while it was being re-created: not a failure, a
        // renewal to do again, which the next look decides from what is there then.
        check();
        return false;
      }
      log.error?.(
        `mcpool: could not re-create ${socketPath} (${reason}): ${(error as Error).message}`,
      );
      return false;
    } finally {
      made?.release();
    }
    armAll();
    races = 0;
    log.info?.(`mcpool: re-created ${socketPath} (${reason})`);
    onRenewed?.();
    // The folder may have gone again since: the look after each renewal sees to it.
    check();
    return true;
  }

  /**
   * Whether a renewal failed because the folder went under it: a path in it vanished, or
   * another folder than the one made (`made`) is there now. Past MAX_RACES in a row it is
   * said, as a failure: something removes the folder faster than it can be made.
   */
  function raced(error: unknown, made: string | undefined): boolean {
    const gone =
      errnoCode(error) === "ENOENT" || (made !== undefined && pathIdentity(dir) !== made);
    races = gone ? races + 1 : 0;
    return gone && races <= MAX_RACES;
  }

  function renew(reason: string, ifEmpty = false): Promise<boolean> {
    const run = renewing.then(() => renewNow(reason, ifEmpty));
    renewing = run.catch(() => false);
    return run;
  }

  armAll();
  return {
    renew,
    close() {
      closed = true;
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
