/**
 * Tools on demand: what a host's first tools/list costs through
 * the bridge — full vs `--catalog` vs `--catalog=auto` — for the three reference servers and
 * for the 100-server scale.mjs set; search_tools' p50 at 5,000 tools through the bridge beside the
 * same search asked of the daemon directly; and the turns a scripted host takes to find and
 * call a tool.
 *
 * Every host is an SDK `Client` on the SDK's in-memory pair to `createBridge()` (the code
 * `mcpool bridge` runs), whose `PoolClient` reaches a real daemon over its socket: the
 * reference servers under `mcpool serve` (node children); the scale.mjs set (100 servers × 50
 * generated tools, the shapes of scale.mjs) under a daemon in this process whose pool serves
 * them on the SDK's in-memory transport. Tokens are the pool's estimate, 4 characters a
 * token over the JSON of the listing.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { URL } from "node:url";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { connect } from "mcpool-client";
import { CATALOG_TOKENS, createBridge } from "../dist/bridge/index.js";
import { createDaemon } from "../dist/daemon/daemon.js";
import { memoryTransport } from "../dist/testing/index.js";
import { benchHome, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { generatedServer } from "./lib/generated.mjs";
import { figure, note } from "./lib/report.mjs";
import { percentile } from "./lib/stats.mjs";

const SERVERS = Number(process.env.BENCH_CATALOG_SERVERS ?? 100);
const SEARCH_ROUNDS = 10;
const SEARCH_PER_ROUND = 30;
const QUERY = "read the contents of a file in a directory";

/** A host session on a bridge of `pool` with `options`; the bridge is closed at cleanup. */
async function host(pool, options = {}) {
  const bridge = await createBridge({ client: pool, ...options });
  const [hostSide, bridgeSide] = InMemoryTransport.createLinkedPair();
  await bridge.createServer().connect(bridgeSide);
  const client = new Client({ name: "bench-catalog-host", version: "1.0.0" });
  await client.connect(hostSide);
  onCleanup(async () => {
    await client.close();
    await bridge.close();
  });
  return client;
}

const sizeOf = (tools) => {
  const bytes = Buffer.byteLength(JSON.stringify({ tools }));
  return { bytes, tokens: Math.ceil(bytes / 4), tools: tools.length };
};

/** The first list of a fresh session in each mode. */
async function firstLists(pool, budget) {
  const full = sizeOf((await (await host(pool)).listTools()).tools);
  const catalog = sizeOf((await (await host(pool, { catalog: { mode: "on" } })).listTools()).tools);
  const auto = sizeOf(
    (await (await host(pool, { catalog: { mode: "auto", tokens: budget } })).listTools()).tools,
  );
  return { full, catalog, auto };
}

function listFigures(set, lists, target) {
  const detail = (mode) => ({
    bytes: lists[mode].bytes,
    tools: lists[mode].tools,
    fullBytes: lists.full.bytes,
    fullTools: lists.full.tools,
  });
  return [
    figure({
      name: `catalog.${set}.full.tokens`,
      unit: "tokens",
      value: lists.full.tokens,
      baseline: null,
      checks: [],
      bytes: lists.full.bytes,
      tools: lists.full.tools,
    }),
    figure({
      name: `catalog.${set}.catalog.bytes`,
      unit: "B",
      value: lists.catalog.bytes,
      baseline: lists.full.bytes,
      baselineLabel: "the full first tools/list",
      checks: [["ratio", "<=", target]],
      tokens: lists.catalog.tokens,
      ...detail("catalog"),
    }),
    figure({
      name: `catalog.${set}.auto.bytes`,
      unit: "B",
      value: lists.auto.bytes,
      baseline: lists.full.bytes,
      baselineLabel: "the full first tools/list",
      checks: [],
      tokens: lists.auto.tokens,
      ...detail("auto"),
    }),
  ];
}

/** Calls a user makes most, so `auto` has usage to go by: 8 tools, most-called first. */
const HABITS = [
  ["everything__echo", { message: "hi" }, 12],
  ["everything__get-sum", { a: 1, b: 2 }, 10],
  ["memory__read_graph", {}, 8],
  ["memory__search_nodes", { query: "x" }, 6],
  ["filesystem__list_directory", null, 5],
  ["filesystem__read_text_file", null, 4],
  ["memory__create_entities", { entities: [] }, 3],
  ["filesystem__get_file_info", null, 2],
];

/** A scripted host's tasks: its words, and the tool a person would say is the one. */
const TASKS = [
  ["add two numbers together", "everything__get-sum", { a: 2, b: 3 }],
  ["read the text of a file", "filesystem__read_text_file", null],
  ["create entities in the knowledge graph", "memory__create_entities", { entities: [] }],
  ["list what is in a directory", "filesystem__list_directory", "dir"],
  ["print environment variables", "everything__get-env", {}],
];

/**
 * Turns a scripted host takes: one search_tools, then a call of each result in rank order
 * until the task's tool (a model that picks the top result takes as many); 1 turn when the
 * tool is in the first list already.
 */
async function scriptedTurns(pool, files) {
  const session = await host(pool, { catalog: { mode: "on" } });
  const listed = new Set((await session.listTools()).tools.map((t) => t.name));
  const turns = [];
  for (const [query, wanted, args] of TASKS) {
    if (listed.has(wanted)) {
      turns.push({ query, wanted, turns: 1 });
      continue;
    }
    const found = await session.callTool({ name: "search_tools", arguments: { query } });
    const names = found.structuredContent.tools.map((t) => t.name);
    const rank = names.indexOf(wanted);
    const answer = await session.callTool({
      name: wanted,
      arguments: args === "dir" ? { path: files } : (args ?? { path: join(files, "note.txt") }),
    });
    turns.push({
      query,
      wanted,
      rank: rank + 1,
      turns: rank === -1 ? null : 1 + rank + 1,
      ok: !answer.isError,
    });
  }
  return turns;
}

async function reference() {
  const home = benchHome("mcpool-bench-catalog-");
  const files = join(home.dir, "files");
  mkdirSync(files, { recursive: true });
  writeFileSync(join(files, "note.txt"), "a note\n");
  home.writeConfig({
    everything: { ...rows.everything(), alwaysLoad: ["echo"] },
    memory: rows.memory(join(files, "memory.jsonl")),
    filesystem: rows.filesystem(files),
  });
  const daemon = await startDaemon(home);
  onCleanup(() => daemon.stop());
  const pool = await connect({ socketPath: home.socketPath, clientName: "bench-catalog" });
  onCleanup(() => pool.close());
  await waitReady(pool, 3, 60_000);

  const catalog = await pool.catalog();
  const perTool = catalog.flatMap((s) => s.tools.map((t) => t.tokens ?? 0));
  note(
    `reference servers: ${perTool.length} tools, tokens per tool p50 ${percentile(perTool, 50)}, p90 ${percentile(perTool, 90)}, max ${Math.max(...perTool)}`,
  );
  const turns = await scriptedTurns(pool, files);
  for (const [name, args, times] of HABITS) {
    const given = args ?? {
      path: name.endsWith("list_directory") ? files : join(files, "note.txt"),
    };
    for (let i = 0; i < times; i++) await pool.call(name, given);
  }
  const lists = await firstLists(pool, CATALOG_TOKENS);
  const solved = turns.filter((t) => t.turns !== null);
  return [
    ...listFigures("reference", lists, 0.25),
    figure({
      name: "catalog.reference.tokensPerTool.p50",
      unit: "tokens",
      value: percentile(perTool, 50),
      baseline: null,
      checks: [],
      p90: percentile(perTool, 90),
      max: Math.max(...perTool),
      tools: perTool.length,
      catalogTokens: CATALOG_TOKENS,
    }),
    figure({
      name: "catalog.scriptedHost.turns.mean",
      unit: "turns",
      value: solved.reduce((sum, t) => sum + t.turns, 0) / solved.length,
      baseline: 2,
      baselineLabel: "1 search + 1 call",
      checks: [],
      tasks: turns,
    }),
  ];
}

async function scaleSet() {
  const home = benchHome("mcpool-bench-catalog-scale-set-");
  const builders = {};
  const servers = {};
  for (let k = 0; k < SERVERS; k++) {
    builders[`gen${k}`] = generatedServer(k);
    // The URL policy takes https; the transport below serves it from memory.
    servers[`svc${String(k).padStart(3, "0")}`] = {
      type: "http",
      url: `https://gen${k}.invalid/mcp`,
      ...(k === 0 ? { alwaysLoad: ["read_file_0"] } : {}),
    };
  }
  home.writeConfig(servers);
  const inMemory = memoryTransport(builders);
  const daemon = await createDaemon({
    socketPath: home.socketPath,
    configPath: home.configPath,
    env: home.env,
    pool: {
      createTransport: (row, ...rest) =>
        inMemory({ ...row, url: `memory://${new URL(row.url).hostname.split(".")[0]}` }, ...rest),
      toolsTokenWarning: 0,
    },
  });
  await daemon.start();
  onCleanup(() => daemon.stop());
  const pool = await connect({
    socketPath: home.socketPath,
    clientName: "bench-catalog-scale-set",
  });
  onCleanup(() => pool.close());
  await waitReady(pool, SERVERS, 120_000);
  const catalog = await pool.catalog();
  const indexed = catalog.reduce((sum, s) => sum + s.tools.length, 0);
  note(`scale.mjs set: ${SERVERS} servers, ${indexed} tools`);
  // Usage for `auto`: three tools of other servers, called a few times each.
  for (const server of catalog.slice(1, 4)) {
    const name = server.tools[0].name;
    const [definition] = await pool.tools({ names: [name] });
    const args = Object.fromEntries(definition.function.parameters.required.map((k) => [k, "x"]));
    for (let i = 0; i < 5; i++) await pool.call(name, args);
  }
  const lists = await firstLists(pool, CATALOG_TOKENS);

  // search_tools through a catalog bridge vs the daemon's search asked directly, alternating.
  const session = await host(pool, { catalog: { mode: "on" } });
  const arms = {
    bridge: () => session.callTool({ name: "search_tools", arguments: { query: QUERY } }),
    direct: () => pool.search(QUERY, { limit: 5 }),
  };
  const samples = { bridge: [], direct: [] };
  for (const arm of Object.keys(arms)) for (let i = 0; i < SEARCH_PER_ROUND; i++) await arms[arm]();
  for (let round = 0; round < SEARCH_ROUNDS; round++) {
    const order = round % 2 === 0 ? ["bridge", "direct"] : ["direct", "bridge"];
    for (const arm of order) {
      for (let i = 0; i < SEARCH_PER_ROUND; i++) {
        const started = performance.now();
        await arms[arm]();
        samples[arm].push(performance.now() - started);
      }
    }
  }
  return [
    ...listFigures("scaleSet", lists, 0.05),
    figure({
      name: "catalog.scaleSet.search.p50",
      unit: "ms",
      value: percentile(samples.bridge, 50),
      baseline: percentile(samples.direct, 50),
      baselineLabel: "the same search asked of the daemon by mcpool-client (no bridge, no schemas)",
      checks: [["value", "<=", 10]],
      p99: percentile(samples.bridge, 99),
      tools: indexed,
      query: QUERY,
      samples: samples.bridge.length,
    }),
  ];
}

run("Tools on demand", async () => [...(await reference()), ...(await scaleSet())]);
