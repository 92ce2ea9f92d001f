import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFilePinStore } from "../../src/daemon/stores/pins.js";

const LIST = {
  fingerprint: "f".repeat(64),
  tools: [
    { name: "tidy", inputSchema: { type: "object" }, annotations: { destructiveHint: true } },
  ],
};

describe("the daemon's pin store", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "mcpool-pins-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps each server's approved list in <data>/pins/<id>.json, 0600 in a 0700 directory, and reads it back", async () => {
    const store = createFilePinStore(dir);
    await store.save("tidy", LIST);
    expect(store.dir).toBe(join(dir, "pins"));
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(store.dir, "tidy.json")).mode & 0o777).toBe(0o600);
    // Written by rename: no temp file is left beside it.
    expect(readdirSync(store.dir)).toEqual(["tidy.json"]);
    expect(createFilePinStore(dir).load("tidy")).toEqual(LIST);
    expect(store.load("other")).toBeUndefined();
  });

  it("replaces the list on a new approval", async () => {
    const store = createFilePinStore(dir);
    await store.save("tidy", LIST);
    await store.save("tidy", { fingerprint: "e".repeat(64), tools: [] });
    expect(store.load("tidy")).toEqual({ fingerprint: "e".repeat(64), tools: [] });
  });

  it("reads a file holding JSON that is no object (null, a list, a number) as no approval", async () => {
    const store = createFilePinStore(dir);
    await store.save("tidy", LIST);
    for (const text of ["null", "[]", "7", '"pin"']) {
      writeFileSync(join(store.dir, "tidy.json"), text);
      expect(store.load("tidy")).toBeUndefined();
    }
  });

  it("reads a damaged file as no approval, and refuses an id that could leave the directory", async () => {
    const store = createFilePinStore(dir);
    await store.save("tidy", LIST);
    writeFileSync(join(store.dir, "tidy.json"), "{ not json");
    expect(store.load("tidy")).toBeUndefined();
    writeFileSync(join(store.dir, "tidy.json"), JSON.stringify({ fingerprint: 1, tools: [] }));
    expect(store.load("tidy")).toBeUndefined();
    expect(store.load("../tidy")).toBeUndefined();
    await expect(store.save("../escape", LIST)).rejects.toThrow(/cannot keep a pin/);
    expect(readdirSync(dir)).toEqual(["pins"]);
  });
});
