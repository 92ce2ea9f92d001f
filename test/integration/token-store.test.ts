/**
 * The daemon's OAuth token store on disk: one 0600 file per server url in a 0700
 * directory, written by rename, read back only for the url it was written for.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileTokenStore, tokenFileName } from "../../src/daemon/stores/tokens.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcpool-tokens-"));
  dirs.push(dir);
  return dir;
}

const url = "https://mcp.example.com/mcp";
const credentials = {
  tokens: { access_token: "at-canary", token_type: "Bearer" },
  clientInformation: { client_id: "c" },
  savedAt: 1,
};

describe("the file token store", () => {
  it("writes one 0600 file per url in a 0700 directory, leaving no temp file, and reads it back", async () => {
    const store = createFileTokenStore(dataDir());
    expect(store.load(url)).toBeUndefined();
    await store.save(url, credentials);
    await store.save("https://other.example.com/mcp", credentials);
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(store.dir).sort();
    expect(files).toEqual(
      [tokenFileName(url), tokenFileName("https://other.example.com/mcp")].sort(),
    );
    for (const file of files) expect(statSync(join(store.dir, file)).mode & 0o777).toBe(0o600);
    expect(store.load(url)).toEqual(credentials);
    await store.delete(url);
    expect(store.load(url)).toBeUndefined();
    await store.delete(url); // idempotent
  });

  it("reads nothing from a file written for another url, or from one that does not parse", async () => {
    const store = createFileTokenStore(dataDir());
    await store.save(url, credentials);
    const file = join(store.dir, tokenFileName(url));
    writeFileSync(file, JSON.stringify({ url: "https://evil.example.com/", ...credentials }));
    expect(store.load(url)).toBeUndefined();
    writeFileSync(file, "{ not json");
    expect(store.load(url)).toBeUndefined();
  });
});
