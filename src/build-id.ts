/**
 * This build's identity: a digest of the JavaScript mcpool runs (its own `dist/` and its
 * protocol workspace's), so two builds that could answer differently never share an identity
 * though their version number is the same. A rebuild with the very same output keeps it.
 *
 * `npm run build` digests the output once and writes it beside this module (BUILD_ID_FILE,
 * scripts/build-id.mjs); a process reads that small file, where digesting ~2 MB cost the
 * daemon's start and a cold entry's first answer some 40 ms of CPU. Output that was not built
 * that way (a bare `tsc`) has no file, and is digested here as it is. Read once per process,
 * by a process that needs it: the daemon as it starts its recorder (so an install over its
 * files later does not change it), an entry checking a recording.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The file the build writes the digest to, in the folder of this module's output. */
export const BUILD_ID_FILE = "build-id.json";

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

/** The digest of every `.js` file under the build's roots, by path and content. */
export function digestBuild(): string {
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
  return hash.digest("hex");
}

/** The digest the build wrote, if it wrote one. */
function written(): string | undefined {
  try {
    const file = fileURLToPath(new URL(BUILD_ID_FILE, import.meta.url));
    const { id } = JSON.parse(readFileSync(file, "utf8")) as { id?: unknown };
    return typeof id === "string" && /^[0-9a-f]{64}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

let memo: string | undefined;

/** This build's identity: the digest the build wrote, else the output's digest now. */
export function buildId(): string {
  memo ??= written() ?? digestBuild();
  return memo;
}
