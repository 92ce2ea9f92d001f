/**
 * What host profiles learn about a row's server: a question it was seen to ask keeps every
 * capability key lacking it off the row's connection, from then on and after a restart
 * (the memo the tools cache keeps, read back by the daemon's store); what is learnt over a
 * connection is forgotten when the row's connection changes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/config/rows.js";
import { createFileToolsCache } from "../../src/daemon/stores/tools-cache.js";
import { elicitationQuestion, ProfileFacts } from "../../src/pool/profile-facts.js";

const row = { transport: "stdio", command: "node", args: ["server.mjs"] } as McpServerConfig;

describe("the questions a row's server asks", () => {
  it("keeps the capability keys lacking a question it asked off the row's connection", () => {
    const facts = new ProfileFacts();
    facts.same(row, "s", "none");
    facts.same(row, "s", "roots");
    facts.same(row, "s", "sampling");
    facts.same(row, "s", "elicitation:url");
    expect(facts.shares("s", {})).toBe(true);

    expect(facts.asked(row, "s", elicitationQuestion({}))).toBe(true);
    expect(facts.asked(row, "s", "elicitation:form")).toBe(false);
    expect(facts.shares("s", {})).toBe(false);
    expect(facts.shares("s", { roots: [] })).toBe(false);
    expect(facts.shares("s", { sampling: true })).toBe(false);
    // A host declaring only url elicitation lacks the form the server asked for.
    expect(facts.shares("s", { elicitation: ["url"] })).toBe(false);
    expect(facts.lacks("s", "elicitation:form+url,sampling")).toBe(false);
    expect(facts.lacks("s", 'sampling,extensions:{"x/a":{}}')).toBe(true);
    // Found the same again (a child listing the row's tools): still not shared.
    facts.same(row, "s", "none");
    expect(facts.shares("s", {})).toBe(false);

    expect(elicitationQuestion({ mode: "url" })).toBe("elicitation:url");
    expect(facts.memo("s")).toEqual({ same: ["none"], asks: ["elicitation:form"] });
  });

  it("is read back from the tools cache, and forgotten when the row's connection changes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpool-profile-facts-"));
    try {
      const store = createFileToolsCache(dir);
      await store.save("s", {
        connection: "c",
        tools: [],
        profiles: { same: ["none", "sampling"], asks: ["sampling"] },
      });
      const loaded = await createFileToolsCache(dir).load("s");
      expect(loaded?.profiles).toEqual({ same: ["none", "sampling"], asks: ["sampling"] });

      const facts = new ProfileFacts();
      facts.learn(row, "s", loaded!.profiles!);
      // A kept same key that lacks a kept question is not taken up.
      expect(facts.shares("s", {})).toBe(false);
      expect(facts.shares("s", { sampling: true })).toBe(true);

      facts.sync(new Map([["s", { ...row, args: ["other.mjs"] } as McpServerConfig]]));
      expect(facts.memo("s")).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("drops a stored question it does not know", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpool-profile-facts-"));
    try {
      const store = createFileToolsCache(dir);
      await store.save("s", {
        connection: "c",
        tools: [],
        profiles: { asks: ["telepathy"] } as never,
      });
      expect((await store.load("s"))?.profiles).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
