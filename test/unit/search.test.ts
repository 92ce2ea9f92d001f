import { afterEach, describe, expect, it } from "vitest";

import { McpPool, rankTools, stem, tokenize } from "../../src/index.js";
import { searchCatalog, TermCache } from "../../src/pool/catalog/search.js";
import { makePool, memoryRow } from "../../src/testing/index.js";
import { scriptedServer, tool } from "../helpers/tool-server.js";

describe("tokenize and stem", () => {
  it("makes read, reads and reading one word, and the same for a few other families", () => {
    const families = [
      ["read", "reads", "reading"],
      ["file", "files"],
      ["directory", "directories"],
      ["write", "writes", "writing"],
      ["list", "lists", "listed", "listing"],
      ["run", "runs", "running"],
      ["query", "queries"],
      ["search", "searches", "searching"],
    ];
    for (const family of families) {
      expect(new Set(family.map(stem)), family.join("/")).toHaveProperty("size", 1);
    }
    // Words that only look like a plural keep their ending.
    expect(stem("status")).toBe("status");
    expect(stem("add")).toBe("add");
    expect(stem("adding")).toBe("add");
  });

  it("splits on punctuation and camelCase, lowercases and drops stopwords", () => {
    expect(tokenize("readTextFile")).toEqual(["read", "text", "fil"]);
    expect(tokenize("get-file_info")).toEqual(["get", "fil", "info"]);
    expect(tokenize("parseHTTPServer v2")).toEqual(["pars", "http", "server", "v2"]);
    expect(tokenize("Read a file from the disk.")).toEqual(["read", "fil", "disk"]);
    expect(tokenize("the of a")).toEqual([]);
  });
});

describe("rankTools", () => {
  const tools = [
    { name: "list_directory", description: "Lists the files in a directory." },
    { name: "write_file", description: "Writes a file." },
    { name: "read_multiple_files", description: "Reads several files at once." },
    { name: "read_file", description: "Reads one file." },
    { name: "fetch", title: "Read a web page", description: "Fetches a URL." },
    { name: "echo", description: "Answers with its input.", slug: "files", label: "Files" },
  ];

  it("scores a query word once, by the best place it turned up: name, title, description, server", () => {
    const ranked = rankTools("reading files", tools);
    const byName = Object.fromEntries(ranked.map((r) => [r.tool.name, r.score]));
    // read_file: both words in the name.
    expect(byName.read_file).toBeGreaterThan(byName.write_file!);
    // write_file: "files" in the name, "reading" nowhere.
    expect(byName.write_file).toBeGreaterThan(byName.fetch!);
    // fetch: "reading" in the title only beats a description match only.
    expect(byName.fetch).toBeGreaterThan(byName.echo!);
    // echo: "files" only through its server's slug and label, still found.
    expect(byName.echo).toBeGreaterThan(0);
  });

  it("puts the tool whose name is most made of query words first among equals, then keeps the given order", () => {
    const names = rankTools("read file", tools).map((r) => r.tool.name);
    expect(names.slice(0, 2)).toEqual(["read_file", "read_multiple_files"]);
  });

  it("leaves out tools that share no word, and finds nothing for a query of stopwords", () => {
    expect(rankTools("weather forecast", tools)).toEqual([]);
    expect(rankTools("the a of", tools)).toEqual([]);
  });

  it("reuses tokenized text through a cache without changing the answer", () => {
    const cache = new TermCache(2);
    const first = rankTools("read file", tools, cache);
    const second = rankTools("read file", tools, cache);
    expect(second).toEqual(first);
  });
});

describe("searchCatalog", () => {
  const catalog = [
    {
      id: "mem",
      slug: "mem",
      label: "Memory",
      tools: [{ name: "mem__read_graph", description: "Read the whole graph." }],
    },
    {
      id: "fs",
      slug: "fs",
      label: "Files",
      tools: [
        { name: "fs__write_file", description: "Write a file." },
        { name: "fs__read_file", description: "Read a file." },
      ],
    },
  ];

  it("orders servers by their best tool and each server's tools best first, in the catalog's shape", () => {
    const found = searchCatalog("read a file", catalog);
    expect(found.map((s) => [s.id, s.tools.map((t) => t.name)])).toEqual([
      ["fs", ["fs__read_file", "fs__write_file"]],
      ["mem", ["mem__read_graph"]],
    ]);
    expect(found[0]).toMatchObject({ slug: "fs", label: "Files" });
  });

  it("cuts to the limit over all servers", () => {
    expect(searchCatalog("read a file", catalog, { limit: 1 })).toEqual([
      { ...catalog[1], tools: [{ name: "fs__read_file", description: "Read a file." }] },
    ]);
    expect(searchCatalog("read a file", catalog, { limit: 0 })).toEqual([]);
  });

  it("ranks the tool's own name, not the slug in front of it", () => {
    // The slug "fs" is a server word (weight 1), not a name word.
    const found = searchCatalog("fs", catalog);
    expect(found.flatMap((s) => s.tools)).toHaveLength(2);
  });
});

describe("catalog, search, alwaysLoaded and describe on the pool", () => {
  const pools: McpPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()));
  });

  const fsTools = () => [
    tool("read_file", {
      description: "Read a file.",
      annotations: { readOnlyHint: true, title: "Read File" },
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
    }),
    tool("write_file", {
      description: "Write a file.",
      annotations: { destructiveHint: true },
    }),
    tool("delete_file", { description: "Delete a file." }),
  ];

  async function twoServers() {
    const fs = scriptedServer(fsTools());
    const mem = scriptedServer([tool("read_graph", { description: "Read the graph." })]);
    const pool = makePool({ servers: { fs: fs.build, mem: mem.build } });
    pools.push(pool);
    await pool.sync([
      memoryRow("fs", "fs", {
        label: "Files",
        hiddenTools: ["delete_file"],
        alwaysLoad: ["read_file", "delete_file", "missing"],
      }),
      memoryRow("mem", "mem", { alwaysLoad: ["read_graph"] }),
    ]);
    return { pool, fs, mem };
  }

  it("searches the catalog with scope, limit and hiding, and carries tokens on every tool", async () => {
    const { pool } = await twoServers();
    const found = pool.search("read a file");
    expect(found.map((s) => [s.id, s.tools.map((t) => t.name)])).toEqual([
      ["fs", ["fs__read_file", "fs__write_file"]],
      ["mem", ["mem__read_graph"]],
    ]);
    expect(found.flatMap((s) => s.tools).every((t) => t.tokens > 0)).toBe(true);
    expect(pool.search("delete")).toEqual([]);
    expect(pool.search("read", { servers: ["mem"] }).map((s) => s.id)).toEqual(["mem"]);
    expect(pool.search("read", { servers: [] })).toEqual([]);
    expect(pool.search("read", { limit: 1 }).flatMap((s) => s.tools)).toHaveLength(1);
    expect(pool.state()[0]?.tools.every((t) => (t.tokens ?? 0) > 0)).toBe(true);
  });

  it("answers alwaysLoaded with qualified names tools() would hand out: not hidden, not missing, in scope", async () => {
    const { pool } = await twoServers();
    expect(pool.alwaysLoaded()).toEqual(["fs__read_file", "mem__read_graph"]);
    expect(pool.alwaysLoaded(["mem"])).toEqual(["mem__read_graph"]);
    expect(pool.alwaysLoaded([])).toEqual([]);
    const names = pool.alwaysLoaded();
    expect(pool.tools({ names }).map((t) => t.function.name)).toEqual(names);
  });

  it("reads hiddenTools and alwaysLoad at call time, without a reconnect", async () => {
    const { pool, fs } = await twoServers();
    await pool.sync([memoryRow("fs", "fs", { alwaysLoad: ["delete_file"] }), memoryRow("mem")]);
    expect(pool.alwaysLoaded()).toEqual(["fs__delete_file"]);
    expect(pool.search("delete").flatMap((s) => s.tools.map((t) => t.name))).toEqual([
      "fs__delete_file",
    ]);
    expect(fs.spawns).toBe(1);
  });

  it("describes annotations, title, schemas and _meta, and refuses what call() would", async () => {
    const { pool } = await twoServers();
    expect(pool.describe("fs__read_file")).toEqual({
      name: "fs__read_file",
      serverId: "fs",
      toolName: "read_file",
      title: "Read File",
      description: "Read a file.",
      annotations: { readOnlyHint: true, title: "Read File" },
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
      tokens: expect.any(Number),
    });
    expect(pool.describe("fs__write_file")?.annotations).toEqual({ destructiveHint: true });
    expect(pool.describe("fs__read_file", { servers: ["mem"] })).toBeUndefined();
    expect(pool.describe("fs__nothing")).toBeUndefined();
    expect(pool.describe("fs__delete_file")).toBeUndefined();
    expect(pool.describe("fs__delete_file", { hidden: true })).toMatchObject({
      toolName: "delete_file",
      hidden: true,
    });
    // A copy: editing it changes nothing the pool holds.
    const described = pool.describe("fs__read_file")!;
    (described.inputSchema as { type: string }).type = "edited";
    expect(pool.describe("fs__read_file")?.inputSchema.type).toBe("object");
  });

  it("carries outputSchema and _meta when a server sends them", async () => {
    const server = scriptedServer([]);
    const pool = makePool({ servers: { s: server.build } });
    pools.push(pool);
    server.setTools([
      {
        name: "stats",
        description: "Counts things.",
        ...({
          outputSchema: { type: "object", properties: { n: { type: "integer" } } },
          _meta: { "example.com/owner": "team-a" },
        } as object),
      },
    ]);
    await pool.sync([memoryRow("s")]);
    expect(pool.describe("s__stats")).toMatchObject({
      outputSchema: { type: "object", properties: { n: { type: "integer" } } },
      meta: { "example.com/owner": "team-a" },
    });
  });

  it("connects nothing: a stopped server answers catalog, search, alwaysLoaded and describe from its last-known list", async () => {
    const { pool, fs, mem } = await twoServers();
    await pool.stop("fs");
    await pool.stop("mem");
    expect(pool.catalog().map((s) => s.stale)).toEqual([true, true]);
    expect(pool.search("read a file").map((s) => s.id)).toEqual(["fs", "mem"]);
    expect(pool.alwaysLoaded()).toEqual(["fs__read_file", "mem__read_graph"]);
    expect(pool.describe("fs__read_file")?.toolName).toBe("read_file");
    expect([fs.spawns, mem.spawns]).toEqual([1, 1]);
    expect(pool.state().map((s) => s.status)).toEqual(["idle", "idle"]);
  });
});
