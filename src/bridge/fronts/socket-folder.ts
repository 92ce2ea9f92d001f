/**
 * The folder the MCP sockets live in, inside the daemon's runtime folder: made private
 * (privateDir), and watched for a removal during a pass (foldersOf). The runtime folder is the
 * daemon's socket keeper's to make (src/daemon/socket/keeper.ts); a removal of it that
 * overtakes a pass of the MCP sockets is told apart from a failure, so the pass is done again
 * when the keeper renews them, with no error line.
 */
import { chmod, lstat, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { heldIdentity, pathIdentity } from "mcpool-client/paths";

/**
 * A directory only this user can enter; never through a symlink someone planted. Its parent,
 * the runtime folder, is the daemon's to make (its socket keeper): never made here.
 */
export async function privateDir(dir: string): Promise<void> {
  await mkdir(dir, { mode: 0o700 }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  });
  const stats = await lstat(dir);
  if (!stats.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (process.getuid !== undefined && stats.uid !== process.getuid()) {
    throw new Error(`${dir} belongs to another user`);
  }
  await chmod(dir, 0o700);
}

/** The folders one pass of the MCP sockets works in (foldersOf). */
export interface PassFolders {
  readonly missing: boolean;
  made(): void;
  overtaken(): boolean;
  release(): void;
}

/**
 * The runtime folder a pass works in and the MCP sockets' folder in it (`dir`), as they
 * are now, each held (heldIdentity) so that one removed and made again at once is not taken
 * for it; undefined when the runtime folder is gone. `missing`: the sockets' folder is not
 * there (removed, alone or with a runtime folder made again since): nothing can be bound
 * until it is made again. `overtaken()`: a removal came since — either folder changed, or
 * the daemon's socket went with its folder (the keeper renews us). `release()` at the pass's
 * end lets both go.
 */
export function foldersOf(socketPath: string, dir: string): PassFolders | undefined {
  const runtimeDir = dirname(socketPath);
  const folder = heldIdentity(runtimeDir);
  if (folder.identity === undefined) {
    folder.release();
    return undefined;
  }
  let own = heldIdentity(dir);
  return {
    missing: own.identity === undefined,
    made: () => {
      own.release();
      own = heldIdentity(dir);
    },
    overtaken: () =>
      pathIdentity(runtimeDir) !== folder.identity ||
      pathIdentity(dir) !== own.identity ||
      pathIdentity(socketPath) === undefined,
    release: () => {
      folder.release();
      own.release();
    },
  };
}

/** Runs `pass` in the folders as they are now (foldersOf), held until it ends; none: not run. */
export async function inFolders(
  socketPath: string,
  dir: string,
  pass: (folders: PassFolders) => Promise<void>,
): Promise<void> {
  const folders = foldersOf(socketPath, dir);
  if (folders === undefined) return;
  try {
    await pass(folders);
  } finally {
    folders.release();
  }
}
