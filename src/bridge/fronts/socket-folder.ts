/**
 * The folder the MCP sockets live in, inside the daemon's runtime folder: made private
 * (privateDir), and watched for a removal during a pass (foldersOf). The runtime folder is the
 * daemon's socket keeper's to make (src/daemon/socket/keeper.ts); a removal of it that
 * overtakes a pass of the MCP sockets is told apart from a failure, so the pass is done again
 * when the keeper renews them, with no error line.
 */
import { chmod, lstat, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { pathIdentity } from "mcpool-client/paths";

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

/**
 * The runtime folder a pass works in and the MCP sockets' folder in it (`dir`), as they
 * are now; undefined when the runtime folder is gone. `missing`: the sockets' folder is not
 * there (removed, alone or with a runtime folder made again since): nothing can be bound
 * until it is made again. `overtaken()`: a removal came since — either folder changed, or
 * the daemon's socket went with its folder (the keeper renews us).
 */
export function foldersOf(
  socketPath: string,
  dir: string,
): { missing: boolean; made(): void; overtaken(): boolean } | undefined {
  const runtimeDir = dirname(socketPath);
  const folder = pathIdentity(runtimeDir);
  if (folder === undefined) return undefined;
  let own = pathIdentity(dir);
  return {
    missing: own === undefined,
    made: () => void (own = pathIdentity(dir)),
    overtaken: () =>
      pathIdentity(runtimeDir) !== folder ||
      pathIdentity(dir) !== own ||
      pathIdentity(socketPath) === undefined,
  };
}
