import { afterEach, describe, expect, it } from "vitest";

import type { McpPool, PoolEvent } from "../../src/index.js";
import { searchCatalog } from "../../src/pool/catalog/search.js";
import { SearchIndex } from "../../src/pool/catalog/search-index.js";
import type { ServerEntry } from "../../src/pool/server/entry.js";
import type { IndexedTool, ToolIndex } from "../../src/pool/catalog/tool-index.js";
import { makePool, memoryRow } from "../../src/testing/index.js";
import { nextMatching } from "../helpers/processes.js";
import { scriptedServer, tool, type FakeTool } from "../helpers/tool-server.js";

/** Bound on waiting for the pool to re-list a server after tools/list_changed. */
const EVENT_MS = 5000;

const pools: McpPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function toolsChanged(pool: McpPool, serverId: string): Promise<PoolEvent> {
  return nextMatching<PoolEvent>(
    (listener) => pool.onEvent(listener),
    (event) => event.type === "tools-changed" && event.serverId === serverId,
    EVENT_MS,
  );
}

const found = (pool: McpPool, query: string): string[] =>
  pool.search(query, { limit: 100 }).flatMap((s) => s.tools.map((t) => t.name));

/** A tool with a title, which FakeTool has no field for but the list passes through. */
const titled = (name: string, title: string, description: string): FakeTool =>
  ({ name, title, description }) as FakeTool;

describe("the search index on the pool", () => {
  async function threeServers() {
    const fs = scriptedServer([
      tool("read_file", { description: "Read a file from the disk." }),
      tool("read_multiple_files", { description: "Reads several files at once." }),
      tool("write_file", { description: "Write a file." }),
      tool("delete_file", { description: "Delete a file." }),
      titled("list_directory", "List a directory", "Lists the entries of a folder."),
    ]);
    const git = scriptedServer([
      tool("git_log", { description: "Shows the commit log of a repository." }),
      tool("git_show", { description: "Shows a file as it was at a commit." }),
      titled("git_status", "Working tree status", "Lists changed files."),
    ]);
    const web = scriptedServer([
      tool("fetch", { description: "Fetches a URL and reads the page." }),
      titled("search", "Search the web", "Searches for pages about a query."),
    ]);
    const pool = makePool({ servers: { fs: fs.build, git: git.build, web: web.build } });
    pools.push(pool);
    await pool.sync([
      memoryRow("fs", "fs", { label: "Files", hiddenTools: ["delete_file"] }),
      memoryRow("git", "git", { slug: "repo", label: "Git history" }),
      memoryRow("web", "web"),
    ]);
    return { pool, fs, git, web };
  }

  it("answers every query, scope and limit exactly as searchCatalog over catalog() does", async () => {
    const { pool } = await threeServers();
    const queries = [
      "read the contents of a file in a directory",
      "read file",
      "files",
      "repo",
      "git history",
      "search web pages",
      "delete",
      "status of the working tree",
      "commit",
      "the of a",
      "",
      "nothing matches this",
    ];
    const scopes = [undefined, ["fs"], ["git", "web"], []];
    const limits = [undefined, 0, 1, 3, 100];
    for (const query of queries) {
      for (const servers of scopes) {
        for (const limit of limits) {
          const options = {
            ...(servers !== undefined ? { servers } : {}),
            ...(limit !== undefined ? { limit } : {}),
          };
          const expected = searchCatalog(query, pool.catalog(servers), options);
          // Stringified, so the key order a client reads is checked as well.
          expect(
            JSON.stringify(pool.search(query, options)),
            JSON.stringify({ query, options }),
          ).toBe(JSON.stringify(expected));
        }
      }
    }
  });

  it("finds a tool a server adds and loses one it removes after tools/list_changed", async () => {
    const { pool, fs } = await threeServers();
    expect(found(pool, "write")).toEqual(["fs__write_file"]);
    expect(found(pool, "archive")).toEqual([]);

    const changed = toolsChanged(pool, "fs");
    fs.setTools([
      tool("read_file", { description: "Read a file from the disk." }),
      tool("zip_archive", { description: "Packs files into an archive." }),
    ]);
    await fs.listChanged();
    await changed;

    expect(found(pool, "archive")).toEqual(["fs__zip_archive"]);
    expect(found(pool, "write")).toEqual([]);
    expect(pool.search("read file")).toEqual(searchCatalog("read file", pool.catalog()));
  });

  it("follows a row's new slug and label and its hiddenTools", async () => {
    const { pool } = await threeServers();
    expect(found(pool, "archive")).toEqual([]);
    expect(found(pool, "repo")).toEqual(["repo__git_log", "repo__git_show", "repo__git_status"]);
    await pool.sync([
      memoryRow("fs", "fs", { label: "Archive" }),
      memoryRow("git", "git", { slug: "vcs", label: "Git history" }),
      memoryRow("web", "web"),
    ]);
    expect(found(pool, "archive")).toHaveLength(5);
    expect(found(pool, "vcs")).toEqual(["vcs__git_log", "vcs__git_show", "vcs__git_status"]);
    expect(found(pool, "repo")).toEqual([]);
    expect(found(pool, "delete")).toEqual(["fs__delete_file"]);
  });
});

describe("SearchIndex", () => {
  /** A tool index of `servers` (id → tool names), as buildToolIndex lays it out. */
  function indexOf(servers: Record<string, readonly string[]>): ToolIndex {
    const ordered: IndexedTool[] = [];
    for (const [id, names] of Object.entries(servers)) {
      const entry = { id, row: { id }, stale: false } as unknown as ServerEntry;
      for (const name of names) {
        ordered.push({
          qualified: `${id}__${name}`,
          entry,
          tool: { name, description: `Does ${name}.`, inputSchema: { type: "object" } },
          definition: { type: "function", function: { name: `${id}__${name}` } },
          tokens: 1,
        } as IndexedTool);
      }
    }
    return {
      byName: new Map(ordered.map((t) => [t.qualified, t])),
      ordered,
      lostTo: new Map(),
      pinMismatch: new Set(),
      withheld: new Map(),
    };
  }

  const names = (index: SearchIndex, version: ToolIndex, query: string): string[] =>
    index
      .search(version, query, { limit: 100, visible: () => true })
      .flatMap((hit) => hit.tools.map((t) => t.qualified));

  it("builds words once per server and, on a new version, again only for the server whose tools changed", () => {
    const index = new SearchIndex();
    const first = indexOf({ a: ["read_file"], b: ["read_page"], c: ["send_mail"] });
    expect(names(index, first, "read")).toEqual(["a__read_file", "b__read_page"]);
    expect(index.built).toBe(3);
    expect(names(index, first, "mail")).toEqual(["c__send_mail"]);
    expect(index.built).toBe(3);

    index.invalidate();
    const second = indexOf({ a: ["read_file"], b: ["write_page"], c: ["send_mail"] });
    expect(names(index, second, "read")).toEqual(["a__read_file"]);
    expect(names(index, second, "write")).toEqual(["b__write_page"]);
    expect(index.built).toBe(4);
  });
});
