/**
 * Watching `mcp.json` (SPEC A7). chokidar watches the file's directory, not the file:
 * editors that save by writing a temp file and renaming it over replace the inode, and a
 * watch on the old inode would go quiet after the first save.
 */
import { basename, dirname, resolve } from "node:path";
import { watch, type FSWatcher } from "chokidar";

export interface ConfigWatcher {
  /** Resolves once the watch is in place. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export function watchConfig(path: string, onChange: () => void): ConfigWatcher {
  const target = resolve(path);
  const name = basename(target);
  const watcher: FSWatcher = watch(dirname(target), {
    ignoreInitial: true,
    depth: 0,
    // Only the config file itself; temp files of atomic saves are seen through the rename.
    ignored: (candidate: string) => candidate !== dirname(target) && basename(candidate) !== name,
  });
  for (const event of ["add", "change", "unlink"] as const) watcher.on(event, () => onChange());
  const ready = new Promise<void>((done) => watcher.once("ready", () => done()));
  return { ready, close: () => watcher.close() };
}
