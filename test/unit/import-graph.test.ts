/**
 * The layers of layers.js (docs/contributing.md), checked over the import graph of the TypeScript sources:
 * `src/config` ← `src/pool` ← `src/daemon` ← `src/cli`, with `client/` depending on
 * neither the MCP SDK nor `src/`. The ESLint `no-restricted-imports` rules catch a direct
 * wrong arrow in one file; this catches one reached through another file, and one that
 * the lint patterns do not spell (a bare `fs`, a `../../src/...`).
 *
 * Inside a part (src/pool, src/daemon, src/cli, …) the sub-folders are rooms stacked one way,
 * as layers.js lists them: a room imports only rooms below it, never one above and never its
 * part's facade (the part's own files). Parts without rooms, and the client, keep their
 * files free of loops. The rule reads the folders, so a new file in a room is covered as it
 * lands, and a new folder fails until layers.js places it.
 *
 * Specifiers are read with regular expressions, deliberately simple: comments are
 * dropped first so a JSDoc example is not an import, and every relative specifier must
 * resolve to a file, so a form the walker cannot follow fails rather than hides an edge.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, posix, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The stack of rooms per part (layers.js, which eslint.config.js reads too). */
const { ROOMS, PARTS } = (await import(new URL("../../layers.js", import.meta.url).href)) as {
  ROOMS: Readonly<Record<string, readonly string[]>>;
  PARTS: readonly string[];
};

/** Parts whose files must not import each other round a loop: those without rooms, and the bridge. */
const LOOP_FREE = ["client/src", "protocol/src", "src/bridge", "src/config"];

/** Source files a folder may hold of its own; the pool's facade fewer. */
const MAX_FOLDER_FILES = 20;
const MAX_POOL_FACADE_FILES = 12;

/** `import … from "x"`, `import "x"`, `export … from "x"`, `import type … from "x"`. */
const STATIC_IMPORT = /\b(?:import|export)\s+(?:[\w$*\s{},]*?\s*from\s*)?["']([^"'\n]+)["']/g;

/** `import("x")`, with or without options. */
const DYNAMIC_IMPORT = /\bimport\s*\(\s*["']([^"'\n]+)["']\s*[,)]/g;

const BLOCK_COMMENT = /\/\*[\s\S]*?\*\//g;
const LINE_COMMENT = /^\s*\/\/.*$/gm;

/** Every module specifier a TypeScript source names, in order. */
function specifiersOf(source: string): string[] {
  const code = source.replace(BLOCK_COMMENT, "").replace(LINE_COMMENT, "");
  const found: Array<[number, string]> = [];
  for (const pattern of [STATIC_IMPORT, DYNAMIC_IMPORT]) {
    for (const match of code.matchAll(pattern)) found.push([match.index, match[1] as string]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, specifier]) => specifier);
}

interface Edges {
  /** Repo-relative paths of the files this one imports by a relative specifier. */
  local: string[];
  /** Bare specifiers: packages and Node built-ins. */
  external: string[];
  /** Relative specifiers that name no file: the walker would otherwise miss an edge. */
  unresolved: string[];
}

type Graph = Map<string, Edges>;

function toRepoPath(absolute: string): string {
  return relative(ROOT, absolute).split(sep).join(posix.sep);
}

function listSources(dir: string): string[] {
  const absolute = join(ROOT, dir);
  if (!existsSync(absolute)) return [];
  const files: string[] = [];
  for (const entry of readdirSync(absolute)) {
    const path = join(absolute, entry);
    if (statSync(path).isDirectory()) files.push(...listSources(toRepoPath(path)));
    else if (/\.(?:ts|mts|tsx)$/.test(entry) && !entry.endsWith(".d.ts")) {
      files.push(toRepoPath(path));
    }
  }
  return files;
}

/** The source file a relative specifier names, as NodeNext resolution would find it. */
function resolveLocal(fromFile: string, specifier: string): string | undefined {
  const base = join(ROOT, dirname(fromFile), specifier);
  const candidates = [
    base.replace(/\.js$/, ".ts"),
    base.replace(/\.mjs$/, ".mts"),
    base.replace(/\.jsx$/, ".tsx"),
    base,
    `${base}.ts`,
    join(base, "index.ts"),
  ];
  const hit = candidates.find((path) => existsSync(path) && statSync(path).isFile());
  return hit === undefined ? undefined : toRepoPath(hit);
}

function buildGraph(dirs: readonly string[]): Graph {
  const graph: Graph = new Map();
  const pending = dirs.flatMap(listSources);
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (graph.has(file)) continue;
    const edges: Edges = { local: [], external: [], unresolved: [] };
    for (const specifier of specifiersOf(readFileSync(join(ROOT, file), "utf8"))) {
      if (!specifier.startsWith(".")) {
        edges.external.push(specifier);
        continue;
      }
      const target = resolveLocal(file, specifier);
      if (target === undefined) edges.unresolved.push(specifier);
      else {
        edges.local.push(target);
        pending.push(target);
      }
    }
    graph.set(file, edges);
  }
  return graph;
}

/** Every file reachable from `starts`, each with the chain that reached it. */
function reachable(graph: Graph, starts: readonly string[]): Map<string, string[]> {
  const chains = new Map<string, string[]>(starts.map((file) => [file, [file]]));
  const queue = [...starts];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    for (const next of graph.get(file)?.local ?? []) {
      if (chains.has(next)) continue;
      chains.set(next, [...(chains.get(file) as string[]), next]);
      queue.push(next);
    }
  }
  return chains;
}

const NODE_BUILTINS = new Set(builtinModules);

function isNodeBuiltin(specifier: string): boolean {
  return specifier.startsWith("node:") || NODE_BUILTINS.has(specifier.split("/")[0] as string);
}

function isMcpSdk(specifier: string): boolean {
  return specifier.startsWith("@modelcontextprotocol/");
}

/** The SDK's server classes and its in-memory transport: what a daemon never needs. */
function isSdkServerSide(specifier: string): boolean {
  return (
    specifier.startsWith("@modelcontextprotocol/sdk/server/") ||
    specifier.startsWith("@modelcontextprotocol/sdk/inMemory")
  );
}

function under(file: string, dir: string): boolean {
  return file.startsWith(`${dir}/`);
}

const BROWSER_SAFE_ENTRY = "src/config/index.ts";

/** Every wrong arrow in a graph, as a sentence naming the chain that made it. */
function violations(graph: Graph): string[] {
  const found: string[] = [];
  const files = [...graph.keys()];

  for (const [file, edges] of graph) {
    for (const specifier of edges.unresolved) {
      found.push(`${file}: "${specifier}" names no source file`);
    }
    for (const target of edges.local) {
      if (under(target, "src/cli") && !under(file, "src/cli")) {
        found.push(`${file}: imports ${target}; nothing imports src/cli`);
      }
    }
  }

  // src/config is browser-safe and imports nothing from the rest of src/. It may name
  // mcpool-protocol, an external here: the protocol's own rule below keeps it free of Node
  // and of every package, and ESLint lets src/config take only its types (import type).
  const configStarts = [BROWSER_SAFE_ENTRY, ...files.filter((f) => under(f, "src/config"))];
  for (const [file, chain] of reachable(
    graph,
    configStarts.filter((f) => graph.has(f)),
  )) {
    const via = chain.join(" → ");
    if (!under(file, "src/config")) found.push(`${via}: src/config reaches outside src/config`);
    for (const specifier of graph.get(file)?.external ?? []) {
      if (isNodeBuiltin(specifier)) found.push(`${via}: imports Node's "${specifier}"`);
      if (isMcpSdk(specifier)) found.push(`${via}: imports the MCP SDK ("${specifier}")`);
    }
  }

  // src/pool is usable on its own: never the daemon, the CLI or the bridge.
  const poolFiles = files.filter((f) => under(f, "src/pool"));
  for (const [file, chain] of reachable(graph, poolFiles)) {
    for (const layer of ["src/daemon", "src/cli", "src/bridge"]) {
      if (under(file, layer)) found.push(`${chain.join(" → ")}: src/pool reaches ${layer}`);
    }
  }

  // src/testing is for tests: production code that imports it ships the SDK's server and
  // in-memory transport in every process that loads it.
  for (const [file, edges] of graph) {
    if (!under(file, "src") || under(file, "src/testing")) continue;
    for (const target of edges.local) {
      if (under(target, "src/testing")) {
        found.push(`${file}: imports ${target}; production code never imports src/testing`);
      }
    }
  }

  // src/daemon serves the pool over the socket: never the bridge (a client of the daemon),
  // and never the SDK's server side or its in-memory transport, which only tests and the
  // bridge need.
  const daemonFiles = files.filter((f) => under(f, "src/daemon"));
  for (const [file, chain] of reachable(graph, daemonFiles)) {
    const via = chain.join(" → ");
    if (under(file, "src/bridge")) found.push(`${via}: src/daemon reaches src/bridge`);
    for (const specifier of graph.get(file)?.external ?? []) {
      if (isSdkServerSide(specifier)) {
        found.push(`${via}: src/daemon loads the MCP SDK's "${specifier}"`);
      }
    }
  }

  // src/bridge is a client of the daemon: mcpool-client, Node and the MCP SDK only,
  // never a second pool in another process.
  const bridgeFiles = files.filter((f) => under(f, "src/bridge"));
  for (const [file, chain] of reachable(graph, bridgeFiles)) {
    const via = chain.join(" → ");
    if (!under(file, "src/bridge") && !under(file, "client/src")) {
      found.push(`${via}: src/bridge reaches ${file}; it may use only mcpool-client`);
    }
    if (!under(file, "src/bridge")) continue;
    for (const specifier of graph.get(file)?.external ?? []) {
      const allowed =
        isNodeBuiltin(specifier) ||
        isMcpSdk(specifier) ||
        specifier === "mcpool-client" ||
        // Its paths alone (Node's fs, os and path), without loading the client.
        specifier === "mcpool-client/paths" ||
        specifier === "mcpool-protocol";
      if (!allowed)
        found.push(
          `${via}: imports "${specifier}"; src/bridge may use only mcpool-client, Node and the MCP SDK`,
        );
    }
  }

  // src/bridge/lean is what the lean `mcpool bridge` loads in place of the SDK and the
  // client: Node alone (and the client's paths, Node's fs, os and path, which the lean bridge
  // loads first anyway), and nothing outside its room.
  const leanFiles = files.filter((f) => under(f, "src/bridge/lean"));
  for (const [file, chain] of reachable(graph, leanFiles)) {
    const via = chain.join(" → ");
    if (!under(file, "src/bridge/lean")) found.push(`${via}: src/bridge/lean reaches ${file}`);
    for (const specifier of graph.get(file)?.external ?? []) {
      if (!isNodeBuiltin(specifier) && specifier !== "mcpool-client/paths") {
        found.push(`${via}: imports "${specifier}"; src/bridge/lean uses Node alone`);
      }
    }
  }

  // client/ is the wire contract: mcpool-protocol and Node only.
  const clientFiles = files.filter((f) => under(f, "client/src"));
  for (const [file, chain] of reachable(graph, clientFiles)) {
    const via = chain.join(" → ");
    if (under(file, "src")) found.push(`${via}: client/src reaches src/`);
    for (const specifier of graph.get(file)?.external ?? []) {
      if (isMcpSdk(specifier)) found.push(`${via}: imports the MCP SDK ("${specifier}")`);
      if (specifier === "mcpool" || specifier.startsWith("mcpool/")) {
        found.push(`${via}: imports "${specifier}", which is src/`);
      }
    }
  }

  // protocol/ is the runtime-free contract: no package, no Node built-in, nothing of src/.
  const protocolFiles = files.filter((f) => under(f, "protocol/src"));
  for (const [file, chain] of reachable(graph, protocolFiles)) {
    const via = chain.join(" → ");
    if (!under(file, "protocol/src")) found.push(`${via}: protocol/src reaches ${file}`);
    for (const specifier of graph.get(file)?.external ?? []) {
      found.push(`${via}: imports "${specifier}"; protocol/src imports nothing`);
    }
  }
  return found;
}

interface Stack {
  rooms: Readonly<Record<string, readonly string[]>>;
  parts: readonly string[];
  loopFree: readonly string[];
}

/** The part a file belongs to, and its room there (undefined: the part's facade). */
function placeOf(
  file: string,
  parts: readonly string[],
): { part: string; room?: string } | undefined {
  const part = parts.filter((p) => under(file, p)).sort((a, b) => b.length - a.length)[0];
  if (part === undefined) return undefined;
  const rest = file.slice(part.length + 1).split("/");
  return rest.length > 1 ? { part, room: rest[0] as string } : { part };
}

/** One loop among `files` over the graph's edges between them, if there is one. */
function loopAmong(graph: Graph, files: ReadonlySet<string>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file)?.local ?? []) {
      if (!files.has(next)) continue;
      if (state.get(next) === "open") return [...path.slice(path.indexOf(next)), next];
      if (state.get(next) === undefined) {
        const loop = visit(next);
        if (loop) return loop;
      }
    }
    path.pop();
    state.set(file, "done");
    return undefined;
  };
  for (const file of [...files].sort()) {
    if (state.get(file) !== undefined) continue;
    const loop = visit(file);
    if (loop) return loop;
  }
  return undefined;
}

/** Every arrow that runs up a part's stack of rooms, or into its facade, and every loop. */
function roomViolations(graph: Graph, stack: Stack): string[] {
  const found: string[] = [];
  for (const [file, edges] of graph) {
    const from = placeOf(file, stack.parts);
    if (from?.room === undefined) continue;
    const rooms = stack.rooms[from.part] ?? [];
    const rank = rooms.indexOf(from.room);
    if (rank < 0) {
      found.push(`${file}: ${from.part}/${from.room} is a room layers.js does not place`);
      continue;
    }
    for (const target of edges.local) {
      const to = placeOf(target, stack.parts);
      if (to?.part !== from.part || to.room === from.room) continue;
      if (to.room === undefined) {
        found.push(`${file}: imports ${target}, ${from.part}'s facade; rooms never import it`);
      } else if (rooms.indexOf(to.room) > rank) {
        found.push(
          `${file}: imports ${target}; ${from.room} sits below ${to.room} in ${from.part}'s stack`,
        );
      }
    }
  }
  for (const part of stack.loopFree) {
    const files = new Set([...graph.keys()].filter((f) => under(f, part)));
    const loop = loopAmong(graph, files);
    if (loop) found.push(`${loop.join(" → ")}: a loop in ${part}`);
  }
  return found;
}

/** Each part's folders on disk against layers.js, and how many files each holds of its own. */
function folderViolations(files: readonly string[], stack: Stack): string[] {
  const found: string[] = [];
  const own = new Map<string, number>();
  for (const file of files) own.set(dirname(file), (own.get(dirname(file)) ?? 0) + 1);
  for (const [folder, count] of own) {
    const max = folder === "src/pool" ? MAX_POOL_FACADE_FILES : MAX_FOLDER_FILES;
    if (count > max) found.push(`${folder}: ${count} files of its own, more than ${max}`);
    const place = placeOf(`${folder}/x.ts`, stack.parts);
    if (place?.room !== undefined && !(stack.rooms[place.part] ?? []).includes(place.room)) {
      found.push(`${folder}: a folder layers.js does not place in ${place.part}'s stack`);
    }
  }
  for (const [part, rooms] of Object.entries(stack.rooms)) {
    for (const room of rooms) {
      if (!own.has(`${part}/${room}`))
        found.push(`${part}/${room}: placed in layers.js, but empty`);
    }
  }
  return found;
}

/** A graph written by hand, for checking the checks. */
function graphOf(edges: Record<string, { local?: string[]; external?: string[] }>): Graph {
  return new Map(
    Object.entries(edges).map(([file, e]) => [
      file,
      { local: e.local ?? [], external: e.external ?? [], unresolved: [] },
    ]),
  );
}

describe("specifiersOf", () => {
  it("finds static, re-exported, type-only, side-effect and dynamic imports", () => {
    const source = [
      'import { a } from "./a.js";',
      "import type { B } from './b.js';",
      "import * as c from 'node:fs';",
      'import d, {\n  e,\n  type F,\n} from "@modelcontextprotocol/sdk/types.js";',
      'import "./side-effect.js";',
      'export * from "./g.js";',
      'export { h as i } from "./h.js";',
      'export type { J } from "./j.js";',
      'const k = await import("./k.js");',
      'const l = await import(\n  "fs"\n);',
    ].join("\n");
    expect(specifiersOf(source)).toEqual([
      "./a.js",
      "./b.js",
      "node:fs",
      "@modelcontextprotocol/sdk/types.js",
      "./side-effect.js",
      "./g.js",
      "./h.js",
      "./j.js",
      "./k.js",
      "fs",
    ]);
  });

  it("ignores imports written in comments and strings that are not imports", () => {
    const source = [
      "/**",
      ' * import { McpPool } from "node:child_process";',
      " */",
      '// import x from "node:fs";',
      'export const url = "https://example.com"; // not an import',
      'export const name = "node:fs";',
      'export function from(x: string): string { return "from" + x; }',
    ].join("\n");
    expect(specifiersOf(source)).toEqual([]);
  });
});

describe("violations", () => {
  it("finds node:, bare built-in and SDK imports in src/config", () => {
    const found = violations(
      graphOf({
        "src/config/index.ts": { local: ["src/config/a.ts"] },
        "src/config/a.ts": { external: ["node:fs", "path", "@modelcontextprotocol/sdk/types.js"] },
      }),
    );
    expect(found).toEqual([
      `src/config/a.ts: imports Node's "node:fs"`,
      `src/config/a.ts: imports Node's "path"`,
      `src/config/a.ts: imports the MCP SDK ("@modelcontextprotocol/sdk/types.js")`,
    ]);
  });

  it("finds src/config reaching another layer, directly or through another file", () => {
    const found = violations(
      graphOf({
        "src/config/index.ts": { local: ["src/config/a.ts"] },
        "src/config/a.ts": { local: ["src/pool/catalog/naming.ts"] },
        "src/pool/catalog/naming.ts": { external: ["node:crypto"] },
      }),
    );
    expect(found).toEqual([
      "src/config/a.ts → src/pool/catalog/naming.ts: src/config reaches outside src/config",
      `src/config/a.ts → src/pool/catalog/naming.ts: imports Node's "node:crypto"`,
    ]);
  });

  it("finds src/pool reaching the daemon or the CLI, and anything importing the CLI", () => {
    const found = violations(
      graphOf({
        "src/pool/pool.ts": { local: ["src/pool/x.ts"] },
        "src/pool/x.ts": { local: ["src/daemon/process/paths.ts"] },
        "src/daemon/process/paths.ts": { local: ["src/cli/main.ts"] },
        "src/cli/main.ts": {},
      }),
    );
    expect(found).toContain(
      "src/daemon/process/paths.ts: imports src/cli/main.ts; nothing imports src/cli",
    );
    expect(found).toContain(
      "src/pool/x.ts → src/daemon/process/paths.ts: src/pool reaches src/daemon",
    );
    expect(found).toContain(
      "src/pool/x.ts → src/daemon/process/paths.ts → src/cli/main.ts: src/pool reaches src/cli",
    );
    expect(found).toHaveLength(3);
  });

  it("finds client/src importing the SDK or src/", () => {
    const found = violations(
      graphOf({
        "client/src/index.ts": {
          local: ["src/config/rows.ts"],
          external: ["@modelcontextprotocol/sdk"],
        },
        "client/src/other.ts": { external: ["mcpool/servers"] },
        "src/config/rows.ts": {},
      }),
    );
    expect(found).toEqual([
      `client/src/index.ts: imports the MCP SDK ("@modelcontextprotocol/sdk")`,
      `client/src/other.ts: imports "mcpool/servers", which is src/`,
      "client/src/index.ts → src/config/rows.ts: client/src reaches src/",
    ]);
  });

  it("finds src/bridge reaching the pool, the daemon or a package other than the client and the SDK", () => {
    const found = violations(
      graphOf({
        "src/bridge/a.ts": {
          local: ["src/bridge/b.ts"],
          external: ["mcpool-client", "node:http", "@modelcontextprotocol/sdk/types.js", "undici"],
        },
        "src/bridge/b.ts": { local: ["src/pool/pool.ts"] },
        "src/pool/pool.ts": {},
        "src/bridge/c.ts": { local: ["src/daemon/process/paths.ts"] },
        "src/daemon/process/paths.ts": {},
      }),
    );
    expect(found).toEqual([
      `src/bridge/a.ts: imports "undici"; src/bridge may use only mcpool-client, Node and the MCP SDK`,
      "src/bridge/b.ts → src/pool/pool.ts: src/bridge reaches src/pool/pool.ts; it may use only mcpool-client",
      "src/bridge/c.ts → src/daemon/process/paths.ts: src/bridge reaches src/daemon/process/paths.ts; it may use only mcpool-client",
    ]);
  });

  it("finds src/bridge/lean reaching past Node: the SDK, the client or another room", () => {
    const found = violations(
      graphOf({
        "src/bridge/lean/a.ts": {
          local: ["src/bridge/lean/b.ts"],
          external: ["node:net", "@modelcontextprotocol/sdk/types.js"],
        },
        "src/bridge/lean/b.ts": {
          local: ["src/bridge/core/c.ts"],
          external: ["mcpool-client", "mcpool-client/paths"],
        },
        "src/bridge/core/c.ts": {},
      }),
    );
    expect(found).toEqual([
      `src/bridge/lean/a.ts: imports "@modelcontextprotocol/sdk/types.js"; src/bridge/lean uses Node alone`,
      `src/bridge/lean/b.ts: imports "mcpool-client"; src/bridge/lean uses Node alone`,
      "src/bridge/lean/b.ts → src/bridge/core/c.ts: src/bridge/lean reaches src/bridge/core/c.ts",
    ]);
  });

  it("finds the daemon reaching the bridge or the SDK's server side, and production code importing src/testing", () => {
    const found = violations(
      graphOf({
        "src/daemon/daemon.ts": { local: ["src/daemon/default.ts", "src/bridge/naming.ts"] },
        "src/daemon/default.ts": { local: ["src/testing/index.ts"] },
        "src/testing/index.ts": {
          local: ["src/testing/memory.ts"],
          external: ["@modelcontextprotocol/sdk/server/index.js"],
        },
        "src/testing/memory.ts": { external: ["@modelcontextprotocol/sdk/inMemory.js"] },
        "src/bridge/naming.ts": {},
        "src/cli/demo.ts": { local: ["src/testing/index.ts"] },
        "src/demo/echo-server-path.ts": { external: ["node:url"] },
      }),
    );
    expect(found).toEqual([
      "src/daemon/default.ts: imports src/testing/index.ts; production code never imports src/testing",
      "src/cli/demo.ts: imports src/testing/index.ts; production code never imports src/testing",
      "src/daemon/daemon.ts → src/bridge/naming.ts: src/daemon reaches src/bridge",
      `src/daemon/default.ts → src/testing/index.ts: src/daemon loads the MCP SDK's "@modelcontextprotocol/sdk/server/index.js"`,
      `src/daemon/default.ts → src/testing/index.ts → src/testing/memory.ts: src/daemon loads the MCP SDK's "@modelcontextprotocol/sdk/inMemory.js"`,
    ]);
  });

  it("finds protocol/src importing any package, a Node built-in or another tree", () => {
    const found = violations(
      graphOf({
        "protocol/src/codec.ts": { external: ["node:buffer"] },
        "protocol/src/errors.ts": { external: ["json-rpc-2.0"] },
        "protocol/src/methods.ts": { local: ["client/src/paths.ts"] },
        "client/src/paths.ts": {},
      }),
    );
    expect(found).toEqual([
      `protocol/src/codec.ts: imports "node:buffer"; protocol/src imports nothing`,
      `protocol/src/errors.ts: imports "json-rpc-2.0"; protocol/src imports nothing`,
      "protocol/src/methods.ts → client/src/paths.ts: protocol/src reaches client/src/paths.ts",
    ]);
  });

  it("finds a relative import that names no file", () => {
    const graph = graphOf({ "src/pool/a.ts": {} });
    (graph.get("src/pool/a.ts") as Edges).unresolved.push("./gone.js");
    expect(violations(graph)).toEqual([`src/pool/a.ts: "./gone.js" names no source file`]);
  });
});

describe("roomViolations", () => {
  const stack: Stack = {
    rooms: { "src/pool": ["core", "mcp", "calls"] },
    parts: ["src/pool", "client/src"],
    loopFree: ["client/src"],
  };

  it("finds a room importing a room above it, or its part's facade, directly", () => {
    const found = roomViolations(
      graphOf({
        "src/pool/pool.ts": { local: ["src/pool/calls/pipeline.ts", "src/pool/core/errors.ts"] },
        "src/pool/calls/pipeline.ts": {
          local: ["src/pool/mcp/client.ts", "src/pool/calls/results.ts"],
        },
        "src/pool/calls/results.ts": {},
        "src/pool/mcp/client.ts": {
          local: ["src/pool/calls/results.ts", "src/pool/core/errors.ts"],
        },
        "src/pool/core/errors.ts": { local: ["src/pool/pool.ts"] },
      }),
      stack,
    );
    expect(found).toEqual([
      "src/pool/mcp/client.ts: imports src/pool/calls/results.ts; mcp sits below calls in src/pool's stack",
      "src/pool/core/errors.ts: imports src/pool/pool.ts, src/pool's facade; rooms never import it",
    ]);
  });

  it("finds a file in a room the stack does not place, and a loop among a part's files", () => {
    const found = roomViolations(
      graphOf({
        "src/pool/extra/thing.ts": { local: ["src/pool/core/errors.ts"] },
        "src/pool/core/errors.ts": {},
        "client/src/client.ts": { local: ["client/src/link.ts"] },
        "client/src/link.ts": { local: ["client/src/connection.ts"] },
        "client/src/connection.ts": { local: ["client/src/client.ts"] },
      }),
      stack,
    );
    expect(found).toEqual([
      "src/pool/extra/thing.ts: src/pool/extra is a room layers.js does not place",
      "client/src/client.ts → client/src/link.ts → client/src/connection.ts → client/src/client.ts: a loop in client/src",
    ]);
  });

  it("lets the facade import every room, and a room its own files and the rooms below", () => {
    const found = roomViolations(
      graphOf({
        "src/pool/pool.ts": { local: ["src/pool/calls/a.ts", "src/pool/mcp/b.ts"] },
        "src/pool/calls/a.ts": { local: ["src/pool/calls/c.ts", "src/pool/core/d.ts"] },
        "src/pool/calls/c.ts": { local: ["src/pool/calls/a.ts"] },
        "src/pool/mcp/b.ts": { local: ["src/pool/core/d.ts"] },
        "src/pool/core/d.ts": {},
      }),
      stack,
    );
    expect(found).toEqual([]);
  });
});

describe("folderViolations", () => {
  it("counts each folder's own files and places its folders", () => {
    const stack: Stack = {
      rooms: { "src/pool": ["core", "calls"] },
      parts: ["src/pool"],
      loopFree: [],
    };
    const files = [
      ...Array.from({ length: 13 }, (_, i) => `src/pool/f${i}.ts`),
      ...Array.from({ length: 21 }, (_, i) => `src/pool/core/f${i}.ts`),
      "src/pool/odd/x.ts",
    ];
    expect(folderViolations(files, stack)).toEqual([
      "src/pool: 13 files of its own, more than 12",
      "src/pool/core: 21 files of its own, more than 20",
      "src/pool/odd: a folder layers.js does not place in src/pool's stack",
      "src/pool/calls: placed in layers.js, but empty",
    ]);
  });
});

describe("the import graph of this repository", () => {
  const graph = buildGraph(["src", "protocol/src", "client/src"]);

  it("is walked: the browser-safe entry reaches the row types through its re-exports", () => {
    expect(graph.get(BROWSER_SAFE_ENTRY)?.local).toContain("src/config/rows.ts");
    const fromEntry = reachable(graph, [BROWSER_SAFE_ENTRY]);
    expect([...fromEntry.keys()]).toEqual(
      expect.arrayContaining([
        "src/config/rows.ts",
        "src/config/same-connection.ts",
        "src/config/validate.ts",
      ]),
    );
    expect(graph.get("src/pool/catalog/naming.ts")?.external).toContain("node:crypto");
  });

  it("has no wrong arrow", () => {
    expect(violations(graph)).toEqual([]);
  });

  const stack: Stack = { rooms: ROOMS, parts: PARTS, loopFree: LOOP_FREE };

  it("stacks each part's rooms one way, with no loop in a part without rooms", () => {
    expect(Object.keys(ROOMS).length).toBeGreaterThan(0);
    expect(roomViolations(graph, stack)).toEqual([]);
  });

  it("keeps every folder small and placed", () => {
    const files = PARTS.flatMap(listSources);
    expect(files.length).toBeGreaterThan(100);
    expect(folderViolations(files, stack)).toEqual([]);
  });
});
