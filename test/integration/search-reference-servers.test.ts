/**
 * Search on a realistic catalog: the tools of the reference servers everything,
 * filesystem and memory together, as the real servers list them (spawned once, over stdio).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { McpPool, rankTools, type CatalogServer } from "../../src/index.js";

const require = createRequire(import.meta.url);
const bin = (name: string): string =>
  join(dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), "dist/index.js");

let dir: string;
let pool: McpPool;
/** What the pool logged with its default toolsTokenWarning. */
const info: string[] = [];

const flat = (found: CatalogServer[]): string[] =>
  found.flatMap((server) => server.tools.map((tool) => tool.name));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcpool-search-"));
  pool = new McpPool({
    clientName: "mcpool-test",
    log: { info: (message) => info.push(message) },
    connectTimeoutMs: 20_000,
  });
  const node = process.execPath;
  await pool.sync([
    {
      id: "everything",
      transport: "stdio",
      command: node,
      args: [bin("server-everything")],
    },
    {
      id: "filesystem",
      transport: "stdio",
      command: node,
      args: [bin("server-filesystem"), dir],
    },
    {
      id: "memory",
      transport: "stdio",
      command: node,
      args: [bin("server-memory")],
      env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
    },
  ]);
  const states = pool.state().map((s) => [s.id, s.status, s.error]);
  expect(
    states.every(([, status]) => status === "ready"),
    JSON.stringify(states),
  ).toBe(true);
  // Three reference servers to spawn: more than the default hook bound on a loaded machine.
}, 60_000);

afterAll(async () => {
  await pool?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe("search over the reference servers' real tools", () => {
  it("holds all three catalogs", () => {
    const counts = Object.fromEntries(pool.catalog().map((s) => [s.id, s.tools.length]));
    expect(counts.everything).toBeGreaterThan(5);
    expect(counts.filesystem).toBeGreaterThan(5);
    expect(counts.memory).toBeGreaterThan(5);
  });

  it('ranks filesystem\'s read tools first for "read a file"', () => {
    const found = pool.search("read a file");
    expect(found[0]?.id).toBe("filesystem");
    const readTools = pool
      .catalog(["filesystem"])[0]!
      .tools.map((t) => t.name)
      .filter((name) => /^filesystem__read_/.test(name));
    expect(readTools.length).toBeGreaterThanOrEqual(3);
    expect(new Set(flat(found).slice(0, readTools.length))).toEqual(new Set(readTools));
    expect(flat(found)[0]).toBe("filesystem__read_file");
  });

  it("finds each server's own vocabulary", () => {
    expect(flat(pool.search("search the knowledge graph"))[0]).toBe("memory__search_nodes");
    expect(flat(pool.search("list the files in a directory"))[0]).toBe(
      "filesystem__list_directory",
    );
    expect(flat(pool.search("echo a message back"))[0]).toBe("everything__echo");
    expect(flat(pool.search("delete relations")).slice(0, 1)).toEqual(["memory__delete_relations"]);
  });

  it("cuts to the limit and to the scope", () => {
    expect(flat(pool.search("read a file", { limit: 3 }))).toHaveLength(3);
    expect(pool.search("read a file", { servers: ["memory"] }).map((s) => s.id)).toEqual([
      "memory",
    ]);
  });

  it("is what rankTools says of the same list", () => {
    const tools = pool.catalog().flatMap((s) => s.tools.map((t) => ({ ...t, slug: s.slug })));
    const ranked = rankTools("read a file", tools).map((r) => r.tool.name);
    expect(ranked.slice(0, 4)).toEqual(flat(pool.search("read a file")).slice(0, 4));
  });
});

describe("the default toolsTokenWarning", () => {
  it("stays quiet for the three reference servers a new user starts with", () => {
    const all = pool.tools();
    expect(all.length).toBeGreaterThan(20);
    expect(info.filter((message) => message.includes("toolsTokenWarning"))).toEqual([]);
  });
});
