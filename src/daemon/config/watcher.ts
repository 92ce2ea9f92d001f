/**
 * Watching `mcp.json`. chokidar watches from the file's folder's parent, not
 * the file: editors that save by writing a temp file and renaming it over replace the
 * inode, and a watch on the old inode would go quiet after the first save; a watch on the
 * folder itself dies with the folder (`rm -rf` and a new one). Only the route down to the
 * file is watched. When a folder on that route goes, the watch starts again from the
 * nearest folder that exists, and sees the route come back.
 *
 * What chokidar cannot stat (a symlink loop at the path: ELOOP) it reports as an `error`
 * event; unheard, that event would throw and take the daemon down with every server. It
 * is logged, and the watch goes on: the next save is seen as usual.
 */
import { existsSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";
import { watch, type FSWatcher } from "chokidar";

export interface WatchState {
  /** The config file's folder exists and is watched. */
  watching: boolean;
  /** Why not, when not. */
  watchReason?: string;
}

export interface ConfigWatcher {
  /** Resolves once the watch is in place. */
  ready: Promise<void>;
  state(): WatchState;
  /** Starts the watch again from what exists now; resolves once it is in place. */
  rearm(): Promise<void>;
  close(): Promise<void>;
}

/** The nearest folder of `path`'s ancestors (itself included) that exists. */
function nearestExisting(path: string): string {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}

export function watchConfig(
  path: string,
  onChange: () => void,
  onError: (error: Error) => void,
): ConfigWatcher {
  const target = resolve(path);
  const folder = dirname(target);
  let watcher: FSWatcher | undefined;
  let root = folder;
  let closed = false;
  let arming: Promise<void> = Promise.resolve();

  // On the route: the root, a folder between it and the file, or the file itself.
  const onRoute = (candidate: string): boolean =>
    candidate === target || candidate === root || target.startsWith(candidate + sep);

  const arm = async (): Promise<void> => {
    const previous = watcher;
    watcher = undefined;
    await previous?.close().catch(() => undefined);
    if (closed) return;
    root = nearestExisting(dirname(folder));
    const depth = target.slice(root.length).split(sep).filter(Boolean).length - 1;
    const next: FSWatcher = watch(root, {
      ignoreInitial: true,
      depth,
      // Only the route to the file; temp files of atomic saves are seen through the rename.
      ignored: (candidate: string) => !onRoute(resolve(candidate)),
    });
    watcher = next;
    for (const event of ["add", "change", "unlink"] as const) {
      next.on(event, (changed: string) => {
        if (resolve(changed) === target) onChange();
      });
    }
    next.on("addDir", (added: string) => {
      if (resolve(added) === folder) onChange();
    });
    next.on("unlinkDir", (removed: string) => {
      const gone = resolve(removed);
      if (gone === folder) onChange();
      // The root itself went: start again from what is left.
      if (!existsSync(root) || gone === root) void rearm();
    });
    next.on("error", (error) => onError(error as Error));
    // An error during the first scan must not leave start-up waiting for a `ready` that
    // chokidar may not send: either one means the watch is as in place as it will be.
    await new Promise<void>((done) => {
      next.once("ready", () => done());
      next.once("error", () => done());
    });
  };

  const rearm = (): Promise<void> => {
    arming = arming.then(arm, arm);
    return arming;
  };

  const ready = rearm();
  return {
    ready,
    state() {
      if (closed || !watcher) return { watching: false, watchReason: "the watcher is closed" };
      if (!existsSync(folder))
        return {
          watching: false,
          watchReason: `${folder} is gone; watching ${root} for it to come back`,
        };
      return { watching: true };
    },
    rearm,
    async close() {
      closed = true;
      await arming.catch(() => undefined);
      await watcher?.close().catch(() => undefined);
      watcher = undefined;
    },
  };
}
