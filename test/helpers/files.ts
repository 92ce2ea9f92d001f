/** Reading a test home back: every file a daemon left, to search for what must not be there. */
import { lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

/**
 * Every regular file under `dir`, with its path (sockets, links and the like skipped). A running
 * daemon writes files by renaming a temporary beside them, so an entry may be gone by the time it
 * is read: such an entry is skipped, as is a `dir` that does not exist.
 */
export function filesUnder(
  dir: string,
  encoding: BufferEncoding = "latin1",
): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of gone(() => readdirSync(dir)) ?? []) {
    const path = join(dir, name);
    const stat = gone(() => lstatSync(path));
    if (stat?.isDirectory()) out.push(...filesUnder(path, encoding));
    else if (stat?.isFile()) {
      const text = gone(() => readFileSync(path, encoding));
      if (text !== undefined) out.push({ path, text });
    }
  }
  return out;
}

/** `read()`, or undefined when what it reads is no longer there. */
function gone<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * `rm -rf dir`, as a cleaner runs it while a daemon keeps the folder: the daemon may fill the
 * folder again as it goes (ENOTEMPTY), and the removal runs again, as a cleaner's next pass would.
 */
export function removeFolder(dir: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch (error) {
      if (attempt === 50) throw error;
    }
  }
}
