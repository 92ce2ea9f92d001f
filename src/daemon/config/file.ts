/**
 * Reading `mcp.json` without trusting what sits at its path. Whatever is there —
 * a symlink loop, a dangling link, a directory, a FIFO, a socket, a device, an unreadable
 * or a huge file, one that grows while read — the answer is text or a sentence saying what
 * the path is; never a throw, never a wait on a writer that does not come.
 *
 * Only a regular file is read (a symlink to one is fine: people link their dotfiles). The
 * path is opened with O_NONBLOCK, so a FIFO swapped in after the stat does not block the
 * open, and the opened descriptor is checked again before a byte is read.
 */
import { constants, type Stats } from "node:fs";
import { lstat, open, stat, type FileHandle } from "node:fs/promises";

/**
 * Largest config file read. A hand-written `mcp.json` is a few KB and 10,000 generated
 * rows about 1 MB; past this the file is not a config but a mistake (a log redirected
 * over it, a disk image), and reading it would hold the whole of it in memory.
 */
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** Bytes asked of the kernel per read. */
const CHUNK_BYTES = 1024 * 1024;

export type ConfigFileRead =
  | { ok: true; text: string }
  /** Nothing at the path, not even a link. */
  | { ok: false; missing: true }
  | { ok: false; missing?: undefined; error: string };

/** What a non-regular file is, for a message. */
function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  return "not a file";
}

function notRegular(path: string, stats: Stats): ConfigFileRead {
  return { ok: false, error: `${path} is ${kindOf(stats)}, not a regular file` };
}

function tooLarge(path: string): ConfigFileRead {
  return {
    ok: false,
    error: `${path} is larger than ${MAX_CONFIG_BYTES / (1024 * 1024)} MiB, the most a config file may hold`,
  };
}

/** A failed stat or open as a sentence; ENOENT is told apart from a dangling link. */
async function failure(path: string, error: NodeJS.ErrnoException): Promise<ConfigFileRead> {
  switch (error.code) {
    case "ENOENT": {
      const link = await lstat(path).catch(() => undefined);
      if (link?.isSymbolicLink()) {
        return { ok: false, error: `${path} is a symbolic link to nothing (a dangling link)` };
      }
      return { ok: false, missing: true };
    }
    case "ELOOP":
      return { ok: false, error: `${path} is a symbolic link loop` };
    case "EACCES":
    case "EPERM":
      return { ok: false, error: `${path} cannot be read: permission denied` };
    case "ENOTDIR":
      return { ok: false, error: `${path} cannot be reached: a parent of it is not a directory` };
    default:
      return { ok: false, error: `${path} cannot be read: ${error.message}` };
  }
}

/** At most `limit` bytes of an open file, read until EOF. */
async function readBounded(handle: FileHandle, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < limit) {
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, limit - total));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
  }
  return Buffer.concat(chunks, total);
}

/** The text of the config file at `path`, or why there is none. Never throws. */
export async function readConfigFile(path: string): Promise<ConfigFileRead> {
  let stats: Stats;
  try {
    stats = await stat(path);
  } catch (error) {
    return failure(path, error as NodeJS.ErrnoException);
  }
  if (!stats.isFile()) return notRegular(path, stats);
  if (stats.size > MAX_CONFIG_BYTES) return tooLarge(path);

  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return failure(path, error as NodeJS.ErrnoException);
  }
  try {
    // The path may have been swapped between the stat and the open: judge what was opened.
    const opened = await handle.stat();
    if (!opened.isFile()) return notRegular(path, opened);
    // One byte past the cap tells a file at the cap from one that grew beyond it.
    const bytes = await readBounded(handle, MAX_CONFIG_BYTES + 1);
    if (bytes.length > MAX_CONFIG_BYTES) return tooLarge(path);
    return { ok: true, text: bytes.toString("utf8") };
  } catch (error) {
    return failure(path, error as NodeJS.ErrnoException);
  } finally {
    await handle.close().catch(() => undefined);
  }
}
