/**
 * A modern server's cache hints, honoured upstream: a 2026-07-28 tools/list says
 * how long it stays fresh (`ttlMs`) and whether it is the same for every caller
 * (`cacheScope`). A public list is shared until its ttl runs out and is listed again by the
 * next use (a listing or a call), once, never by a timer; a private list is kept per host
 * profile and never lent to another, nor kept in the tools cache. Against an SDK v2 server
 * that declares no listChanged (test/fixtures/modern-cached.mjs), through the pool as a
 * library and through the real daemon.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { HostProfile, PoolClient } from "mcpool-client";
import type { McpPool, ToolDefinition } from "../../src/index.js";
import type { CachedTools, ToolsCacheStore } from "../../src/pool/catalog/tools-cache.js";
import { nodeRow, poolMaker } from "../helpers/stdio-pool.js";
import { fixture, waitFor } from "../helpers/processes.js";
import {
  client,
  serversReady,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { filesUnder } from "../helpers/files.js";

/** Long enough for a listing made right after the connect to come before it runs out. */
const TTL_MS = 2_000;

const { pool, made } = poolMaker();
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(made.splice(0).map((p) => p.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A scratch folder with the fixture's log and its tools file, holding `tools`. */
function scratch(tools: string): {
  log: string;
  toolsFile: string;
  listings(method?: string): number;
} {
  const dir = mkdtempSync(join(tmpdir(), "mcpool-cache-hints-"));
  dirs.push(dir);
  const log = join(dir, "requests.log");
  const toolsFile = join(dir, "tools");
  writeFileSync(log, "");
  writeFileSync(toolsFile, tools);
  const listings = (method = "tools/list"): number =>
    readFileSync(log, "utf8")
      .split("\n")
      .filter((line) => line === method).length;
  return { log, toolsFile, listings };
}

function cachedEnv(
  files: { log: string; toolsFile: string },
  scope: "public" | "private",
): Record<string, string> {
  return {
    MODERN_LOG: files.log,
    CACHE_TOOLS: files.toolsFile,
    CACHE_SCOPE: scope,
    CACHE_TTL_MS: String(TTL_MS),
  };
}

const names = (tools: readonly ToolDefinition[]): string[] => tools.map((t) => t.function.name);

/** When the pool says server `id`'s list stops being fresh. */
function expiresAt(p: McpPool, id = "cached"): number {
  const at = p.state().find((s) => s.id === id)?.toolsCache?.expiresAt;
  if (at === undefined) throw new Error(`server "${id}" has no list expiry`);
  return at;
}

describe("a public list with a ttl (the pool as a library)", () => {
  it("is served until its ttl runs out, then listed again by the next use, once, and never by an idle pool", async () => {
    const files = scratch("first\n");
    const p = pool();
    await p.sync([nodeRow("cached", "modern-cached.mjs", { env: cachedEnv(files, "public") })]);
    expect(files.listings()).toBe(1);
    expect(p.state()[0]?.toolsCache).toMatchObject({ scope: "public" });
    const firstExpiry = expiresAt(p);

    // The server's list moves with no notification; before the ttl the pool's list holds.
    writeFileSync(files.toolsFile, "second\n");
    await p.fresh();
    expect(Date.now()).toBeLessThan(firstExpiry);
    expect(names(p.tools())).toEqual(["cached__base", "cached__first"]);
    expect(files.listings()).toBe(1);

    // Idle past the ttl: nothing wakes the pool to list.
    await waitFor(() => Date.now() > firstExpiry + 500, 10_000, "the ttl to run out");
    expect(files.listings()).toBe(1);

    // The next use lists again: one listing for every use that comes meanwhile.
    await Promise.all([p.fresh(), p.fresh(), p.fresh()]);
    expect(files.listings()).toBe(2);
    expect(names(p.tools())).toEqual(["cached__base", "cached__second"]);
    const secondExpiry = expiresAt(p);
    expect(secondExpiry).toBeGreaterThan(firstExpiry);

    // A call after the ttl lists first: a tool the server added is found, one it dropped is
    // gone, and both calls share one listing.
    writeFileSync(files.toolsFile, "third\n");
    await waitFor(() => Date.now() > secondExpiry, 10_000, "the second ttl to run out");
    const [added, dropped] = await Promise.allSettled([
      p.call("cached__third", {}),
      p.call("cached__second", {}),
    ]);
    expect(added).toEqual({ status: "fulfilled", value: "third" });
    expect(dropped).toMatchObject({ status: "rejected", reason: { code: "unknown-tool" } });
    expect(files.listings()).toBe(3);
  });
});

describe("a private list (the pool as a library)", () => {
  it("is kept per host profile: each host gets its own, none is lent to another, none is stored", async () => {
    const files = scratch("");
    const saved = new Map<string, CachedTools>();
    const store: ToolsCacheStore = {
      load: () => undefined,
      save: (id, cached) => void saved.set(id, cached),
    };
    // As the daemon does: the pool declares sampling and form elicitation (declining both).
    const p = pool({
      toolsCache: store,
      onElicit: async () => ({ action: "decline" }),
      onSample: async () => {
        throw new Error("no model here");
      },
    });
    await p.sync([nodeRow("cached", "modern-cached.mjs", { env: cachedEnv(files, "private") })]);
    expect(p.state()[0]?.toolsCache).toMatchObject({ scope: "private" });

    const sampling: HostProfile = { sampling: true };
    const eliciting: HostProfile = { elicitation: ["form"] };
    // This host's list is, at first, the row's own (the pool declares sampling and form).
    const url: HostProfile = { sampling: true, elicitation: ["form", "url"] };
    expect(names(await p.hostTools(sampling))).toEqual(["cached__base", "cached__for_sampling"]);
    expect(names(await p.hostTools(eliciting))).toEqual([
      "cached__base",
      "cached__for_elicitation",
    ]);
    const own = ["cached__base", "cached__for_sampling", "cached__for_elicitation"];
    expect(names(await p.hostTools(url))).toEqual(own);
    expect(names(p.tools())).toEqual(own);
    const listedAt = Date.now();

    // The server now offers a tool to callers declaring url elicitation only. Once the
    // ttl ran out, each list is listed again for the caller it is for.
    writeFileSync(files.toolsFile, "for_url elicitation.url\n");
    await waitFor(() => Date.now() > listedAt + TTL_MS, 10_000, "the ttl to run out");
    expect(names(await p.hostTools(url))).toEqual([...own, "cached__for_url"]);
    expect(await p.call("cached__for_url", {}, { profile: url })).toBe("for_url");
    await p.fresh();
    expect(names(p.tools())).toEqual(own);
    expect(names(await p.hostTools(sampling))).toEqual(["cached__base", "cached__for_sampling"]);
    await expect(p.call("cached__for_url", {})).rejects.toMatchObject({ code: "unknown-tool" });

    // What the tools cache was handed holds no private list.
    await waitFor(() => saved.has("cached"), 5_000, "the tools cache to be written");
    expect(saved.get("cached")).toMatchObject({ private: true, tools: [] });
  });
});

describe("a passthrough listing (the pool as a library)", () => {
  it("is shared while its public hint holds and asked again after it; a private one is never kept", async () => {
    const pub = scratch("");
    const priv = scratch("");
    const p = pool();
    await p.sync([
      nodeRow("cached", "modern-cached.mjs", { env: cachedEnv(pub, "public") }),
      nodeRow("secret", "modern-cached.mjs", { env: cachedEnv(priv, "private") }),
    ]);
    const prompts = async (id: string): Promise<string[]> =>
      (await p.request(id, "prompts/list")).prompts.map((prompt) => prompt.name);

    // Two callers at once share one request; one more while the hint holds is answered kept.
    expect(await Promise.all([prompts("cached"), prompts("cached")])).toEqual([
      ["listing_1"],
      ["listing_1"],
    ]);
    const answeredAt = Date.now();
    expect(await prompts("cached")).toEqual(["listing_1"]);
    expect(Date.now()).toBeLessThan(answeredAt + TTL_MS);
    expect(pub.listings("prompts/list")).toBe(1);
    await waitFor(() => Date.now() > answeredAt + TTL_MS, 10_000, "the ttl to run out");
    expect(pub.listings("prompts/list")).toBe(1);
    expect(await prompts("cached")).toEqual(["listing_2"]);
    expect(pub.listings("prompts/list")).toBe(2);

    // A private listing goes to the server every time.
    expect(await prompts("secret")).toEqual(["listing_1"]);
    expect(await prompts("secret")).toEqual(["listing_2"]);
    expect(priv.listings("prompts/list")).toBe(2);
  });
});

describe("a passthrough resource read (the pool as a library)", () => {
  it("is served kept while its public hint holds; one answered after input never is; a private one never", async () => {
    const pub = scratch("");
    const priv = scratch("");
    const p = pool({ onElicit: () => ({ action: "accept", content: {} }) });
    await p.sync([
      nodeRow("cached", "modern-cached.mjs", { env: cachedEnv(pub, "public") }),
      nodeRow("secret", "modern-cached.mjs", { env: cachedEnv(priv, "private") }),
    ]);
    const read = async (id: string, uri: string): Promise<string> => {
      const { contents } = await p.request(id, "resources/read", { uri });
      return (contents[0] as { text: string }).text;
    };

    expect(await read("cached", "cached://count")).toBe("read_1");
    const answeredAt = Date.now();
    expect(await read("cached", "cached://count")).toBe("read_1");
    expect(Date.now()).toBeLessThan(answeredAt + TTL_MS);
    expect(pub.listings("resources/read")).toBe(1);
    await waitFor(() => Date.now() > answeredAt + TTL_MS, 10_000, "the ttl to run out");
    expect(await read("cached", "cached://count")).toBe("read_2");
    expect(pub.listings("resources/read")).toBe(2);

    // Public, with a lifetime, but given only after the server asked: never kept (SEP-2549).
    expect(await read("cached", "cached://asks")).toBe("asked_1");
    expect(await read("cached", "cached://asks")).toBe("asked_2");
    expect(pub.listings("resources/read")).toBe(6);

    // A private read goes to the server every time.
    expect(await read("secret", "cached://count")).toBe("read_1");
    expect(await read("secret", "cached://count")).toBe("read_2");
    expect(priv.listings("resources/read")).toBe(2);
  });
});

describe("cache hints through the real daemon", () => {
  let daemon: RunningDaemon | undefined;
  let pc: PoolClient | undefined;
  let home: TestHome | undefined;

  afterEach(async () => {
    await pc?.close();
    await daemon?.stop();
    home?.remove();
  });

  it("lists a public list again for the first tools/list after its ttl, and keeps no private list on disk", async () => {
    const pub = scratch("first\n");
    const priv = scratch("");
    const row = (files: typeof pub, scope: "public" | "private") => ({
      command: process.execPath,
      args: [fixture("modern-cached.mjs")],
      env: cachedEnv(files, scope),
    });
    home = testHome("mcpool-cache-hints-");
    home.writeConfig({ cached: row(pub, "public"), secret: row(priv, "private") });
    daemon = await startDaemon(home);
    await serversReady(home);
    pc = await client(home);
    const state = async (id: string) => (await pc!.state()).find((s) => s.id === id);
    const expiry = (await state("cached"))?.toolsCache?.expiresAt;
    expect(expiry).toBeTypeOf("number");

    writeFileSync(pub.toolsFile, "second\n");
    await waitFor(() => Date.now() > expiry!, 10_000, "the ttl to run out");
    expect(pub.listings()).toBe(1);
    // The daemon declares sampling and elicitation, so its own list has their tools too.
    expect(names(await pc.tools({ servers: ["cached"] }))).toEqual([
      "cached__base",
      "cached__for_sampling",
      "cached__for_elicitation",
      "cached__second",
    ]);
    expect(pub.listings()).toBe(2);

    expect((await state("secret"))?.toolsCache).toMatchObject({ scope: "private" });
    const onDisk = (): string | undefined =>
      filesUnder(home!.dir).find((file) => file.path.endsWith(join("tools-cache", "secret.json")))
        ?.text;
    await waitFor(() => onDisk() !== undefined, 5_000, "the tools cache file of the private row");
    expect(JSON.parse(onDisk()!)).toMatchObject({ private: true, tools: [] });
  });
});
