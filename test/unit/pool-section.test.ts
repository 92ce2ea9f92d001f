/**
 * The `"mcpool"` section's keys are declared once (src/config/pool-section.ts): the list of
 * keys, `validate`'s checks and what the daemon applies are read from that one table, and
 * the configuration page documents each of its keys and no other.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  POOL_SECTION,
  POOL_SECTION_KEYS,
  poolSectionProblems,
  sectionValues,
} from "../../src/config/pool-section.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The keys named in the first column of the configuration page's `"mcpool"` table. */
function documentedKeys(): string[] {
  const page = readFileSync(resolve(root, "docs/configuration.md"), "utf8");
  const section = page.split(/^## /m).find((part) => part.startsWith('The `"mcpool"` section'));
  if (section === undefined) throw new Error('docs/configuration.md has no "mcpool" section');
  const rows = section.split("\n").filter((line) => line.startsWith("| `"));
  return rows.flatMap((row) =>
    [...row.split("|")[1]!.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!),
  );
}

describe('the "mcpool" section', () => {
  it("documents every key of the table, and no key the table lacks", () => {
    expect([...new Set(documentedKeys())].sort()).toEqual([...POOL_SECTION_KEYS].sort());
  });

  it("applies a usable value of each key for the part that takes it, and leaves a bad one out", () => {
    const section = {
      callTimeoutMs: 5_000,
      maxResultChars: 0,
      lazy: true,
      childEnv: "minimal",
      resultCache: true,
      maxMemoryMb: 64,
      maxConnections: 12,
      sampling: false,
      idleTimeoutMs: -1,
      elicitationModes: ["form", "sms"],
    };
    expect(sectionValues(section, "pool")).toEqual({
      callTimeoutMs: 5_000,
      maxResultChars: 0,
      lazy: true,
      childEnv: "minimal",
      resultCache: {},
    });
    expect(sectionValues(section, "monitor")).toEqual({ maxMemoryMb: 64 });
    expect(sectionValues(section, "daemon")).toEqual({ maxConnections: 12, sampling: false });
    expect(poolSectionProblems(section).map((p) => p.key)).toEqual([
      "idleTimeoutMs",
      "elicitationModes",
    ]);
  });

  it("gives each key a type, a default and a doc", () => {
    for (const [name, key] of Object.entries(POOL_SECTION)) {
      expect([name, key.type, key.default, key.doc].every((text) => text.length > 0)).toBe(true);
    }
  });

  it("takes a key named like an Object method for a newer version's, not a known one", () => {
    expect(poolSectionProblems({ constructor: 1, toString: "x" })).toEqual([]);
  });
});
