import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileToolsCache } from "../../src/daemon/stores/tools-cache.js";

const CACHED = {
  connection: "c".repeat(64),
  tools: [{ name: "read", inputSchema: { type: "object" as const } }],
};

describe("the daemon's tools cache", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "mcpool-tools-cache-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps each row's list in <data>/tools-cache/<id>.json, 0600 in a 0700 directory, and reads it back", async () => {
    const store = createFileToolsCache(dir);
    // Listed before the first save: what save() writes is found without listing again.
    expect(store.load("fs")).toBeUndefined();
    await store.save("fs", CACHED);
    expect(store.dir).toBe(join(dir, "tools-cache"));
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(store.dir, "fs.json")).mode & 0o777).toBe(0o600);
    expect(readdirSync(store.dir)).toEqual(["fs.json"]);
    expect(store.load("fs")).toEqual(CACHED);
    expect(createFileToolsCache(dir).load("fs")).toEqual(CACHED);
  });

  it("reads a damaged file as nothing cached, and keeps nothing for an id that could leave the directory", async () => {
    mkdirSync(join(dir, "tools-cache"));
    for (const text of ["{ not json", "null", "[]", JSON.stringify({ connection: 1, tools: [] })]) {
      writeFileSync(join(dir, "tools-cache", "fs.json"), text);
      expect(createFileToolsCache(dir).load("fs")).toBeUndefined();
    }
    const store = createFileToolsCache(dir);
    await store.save("../escape", CACHED);
    expect(store.load("../escape")).toBeUndefined();
    expect(readdirSync(dir)).toEqual(["tools-cache"]);
  });
  it("takes many saves of one row at once without an error or a temp file left, keeping the last", async () => {
    const store = createFileToolsCache(dir);
    const lists = Array.from({ length: 50 }, (_, i) => ({
      connection: "c".repeat(64),
      tools: [{ name: `tool${i}`, inputSchema: { type: "object" as const } }],
    }));
    const saves = await Promise.allSettled(lists.map((cached) => store.save("fs", cached)));
    expect(saves.filter((s) => s.status === "rejected")).toEqual([]);
    await Promise.all([store.save("gh", CACHED), store.save("gh", CACHED)]);
    expect(readdirSync(store.dir).sort()).toEqual(["fs.json", "gh.json"]);
    expect(createFileToolsCache(dir).load("fs")).toEqual(lists.at(-1));
  });
});
