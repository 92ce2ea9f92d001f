// `node --import ./test/helpers/node20-glob-sync.mjs …`: gives ES modules an `fs.globSync` on
// Node 20, which has none (it came in Node 22). The conformance runner
// (@modelcontextprotocol/conformance) imports `{ globSync } from "fs"` and fails to link
// without it.
//
// Assigning `fs.globSync = …` in a preload is not enough: the named exports of a built-in's
// ES module facade are fixed when the built-in is first loaded, before a preload can add
// one. So this registers a resolve hook that hands an importer of "fs" / "node:fs" a module
// re-exporting node:fs plus a globSync, except for that module's own import of node:fs.
// On a Node with a globSync of its own it does nothing.
import fs from "node:fs";
import { register } from "node:module";

const SHIM = "mcpool-shim:fs";

// The module every importer of fs gets: node:fs, and a globSync for `*`, `?` and `**` patterns
// (relative to `cwd`, as Node 22's), which is what the runner asks (`**/checks.json`).
const shim = `
import fs from "node:fs";
import path from "node:path";
export * from "node:fs";
export default fs;
function toRegExp(pattern) {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*" && pattern[i + 1] === "*") {
      out += pattern[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += pattern[i + 2] === "/" ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else out += c.replace(/[.+^\${}()|[\\]\\\\]/g, "\\\\$&");
  }
  return new RegExp("^" + out + "$");
}
export function globSync(pattern, options = {}) {
  const cwd = options.cwd === undefined ? process.cwd() : String(options.cwd);
  const patterns = (Array.isArray(pattern) ? pattern : [pattern]).map(toRegExp);
  let entries;
  try {
    entries = fs.readdirSync(cwd, { recursive: true });
  } catch {
    return [];
  }
  return entries
    .map((entry) => String(entry).split(path.sep).join("/"))
    .filter((entry) => patterns.some((re) => re.test(entry)));
}
`;

const hooks = `
export async function resolve(specifier, context, next) {
  if (
    (specifier === "fs" || specifier === "node:fs") &&
    context.parentURL !== ${JSON.stringify(SHIM)}
  ) {
    return { url: ${JSON.stringify(SHIM)}, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url === ${JSON.stringify(SHIM)}) {
    return { format: "module", source: ${JSON.stringify(shim)}, shortCircuit: true };
  }
  return next(url, context);
}
`;

if (typeof fs.globSync !== "function") {
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
