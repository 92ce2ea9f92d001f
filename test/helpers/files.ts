/** Reading a test home back: every file a daemon left, to search for what must not be there. */
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Every regular file under `dir`, with its path (sockets, links and the like skipped). */
export function filesUnder(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    if (stat.isDirectory()) out.push(...filesUnder(path));
    else if (stat.isFile()) out.push({ path, text: readFileSync(path, "latin1") });
  }
  return out;
}
