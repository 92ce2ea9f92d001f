/**
 * `mcpool logs -f`: the daemon's log as it is written, like `tail -f`, through
 * rotation (the log is renamed to `.1` when it passes its cap and started afresh). Runs
 * until the process is interrupted.
 */
import { constants, watch } from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname } from "node:path";

/** How often the file is looked at even when no change event came (a missed event, NFS). */
const POLL_MS = 1000;

/**
 * Prints every complete line appended to `path` from `offset` on, to `line`, forever. A file
 * that shrinks was rotated: it is read again from its start.
 */
export async function followLog(
  path: string,
  offset: number,
  line: (text: string) => void,
): Promise<never> {
  let position = offset;
  let partial = "";
  let reading = false;
  const readMore = async (): Promise<void> => {
    if (reading) return;
    reading = true;
    try {
      // Never through a link planted at the path (ELOOP): the daemon does not write there.
      const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch(
        () => undefined,
      );
      if (file === undefined) return;
      try {
        const { size } = await file.stat();
        if (size < position) {
          position = 0;
          partial = "";
        }
        if (size === position) return;
        const buffer = Buffer.alloc(size - position);
        const { bytesRead } = await file.read(buffer, 0, buffer.length, position);
        position += bytesRead;
        const lines = (partial + buffer.subarray(0, bytesRead).toString("utf8")).split("\n");
        partial = lines.pop() ?? "";
        for (const text of lines) line(text);
      } finally {
        await file.close();
      }
    } finally {
      reading = false;
    }
  };
  // The directory is watched, not the file: a rotation replaces the file.
  const name = basename(path);
  watch(dirname(path), (_event, changed) => {
    if (changed === null || changed === name) void readMore();
  });
  setInterval(() => void readMore(), POLL_MS);
  await readMore();
  return new Promise<never>(() => undefined);
}
