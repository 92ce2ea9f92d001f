/**
 * Watching `mcp.json` (SPEC A7). chokidar watches the file's directory, not the file:
 * editors that save by writing a temp file and renaming it over replace the inode, and a
 * watch on the old inode would go quiet after the first save.
 *
 * What chokidar cannot stat (a symlink loop at the path: ELOOP) it reports as an `error`
 * event; unheard, that event would throw and take the daemon down with every server. It
 * is logged, and the watch goes on: the next save is seen as usual (SPEC F7).
 */
import { basename, dirname, resolve } from "node:path";
import { watch, type FSWatcher } from "chokidar";

export interface ConfigWatcher {
  /** Resolves once the watch is in place. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export function watchConfig(
  path: string,
  onChange: () => void,
  onError: (error: Error) => void,
): ConfigWatcher {
  const target = resolve(path);
  const name = basename(target);
  const watcher: FSWatcher = watch(dirname(target), {
    ignoreInitial: true,
    depth: 0,
    // Only the config file itself; temp files of atomic saves are seen through the rename.
    ignored: (candidate: string) => candidate !== dirname(target) && basename(candidate) !== name,
  });
  for (const event of ["add", "change", "unlink"] as const) watcher.on(event, () => onChange());
  // An error during the first scan must not leave start-up waiting for a `ready` that
  // chokidar may not send: either one means the watch is as in place as it will be.
  const ready = new Promise<void>((done) => {
    watcher.once("ready", () => done());
    watcher.once("error", () => done());
  });
  watcher.on("error", (error) => onError(error as Error));
  return { ready, close: () => watcher.close() };
}
