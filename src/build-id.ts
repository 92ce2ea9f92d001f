/**
 * This build's identity: a digest of the JavaScript mcpool runs (its own `dist/` and its
 * protocol workspace's), so two builds that could answer differently never share an identity
 * though their version number is the same. A rebuild with the very same output keeps it.
 * Computed once per process (reading ~2 MB: tens of ms on a loaded machine), by a process
 * that needs it: the daemon as it starts its recorder (so an install over its files later
 * does not change it), an entry checking a recording.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The folders whose JavaScript makes this build: this file's own tree, and the protocol's. */
function buildRoots(): string[] {
  const roots = [dirname(fileURLToPath(import.meta.url))];
  try {
    roots.push(dirname(fileURLToPath(import.meta.resolve("mcpool-protocol"))));
  } catch {
    // Not resolvable from here: the build is this tree alone.
  }
  return roots;
}

let memo: string | undefined;

/** The digest of every `.js` file under the build's roots, by path and content. */
export function buildId(): string {
  if (memo !== undefined) return memo;
  const hash = createHash("sha256");
  for (const root of buildRoots()) {
    let entries: string[];
    try {
      entries = readdirSync(root, { recursive: true, encoding: "utf8" });
    } catch {
      continue;
    }
    for (const entry of entries.filter((e) => e.endsWith(".js")).sort()) {
      hash.update(`${entry}\0`);
      hash.update(readFileSync(join(root, entry)));
      hash.update("\0");
    }
  }
  memo = hash.digest("hex");
  return memo;
}
