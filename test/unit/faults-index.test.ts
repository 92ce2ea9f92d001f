/**
 * The index of fault promises (test/faults.ts) stays true: every test it names exists under that
 * title, so renaming or deleting the test that proves a promise fails here.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FAULT_PROMISES } from "../faults.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The titles of a test file's it()/test() calls, whitespace collapsed: the string literal
 * opening the call, or opening the second call of `it.each(table)(…)` or `it.for(table)(…)`
 * (the table form that hands the test its context). Read loosely from
 * the text, since prettier may break a title's call over lines.
 */
export function testTitles(source: string): string[] {
  const literal = String.raw`(["'\x60])((?:\\.|(?!\1)[^\\])*)\1`;
  const direct = new RegExp(
    String.raw`\b(?:it|test)(?:\.(?:only|skip|todo|concurrent|fails))*\s*\(\s*${literal}`,
    "g",
  );
  const titles: string[] = [];
  for (const match of source.matchAll(direct)) titles.push(match[2]!);
  // it.each(table)("title", …): the table may hold any brackets, so find the title after
  // the table's closing parenthesis by walking forward from `.each(` (or `.for(`).
  const each = /\b(?:it|test)(?:\.concurrent)?\.(?:each|for)\s*\(/g;
  for (const match of source.matchAll(each)) {
    const close = closingParen(source, match.index + match[0].length - 1);
    if (close === -1) continue;
    const after = new RegExp(String.raw`^\s*\(\s*${literal}`).exec(source.slice(close + 1));
    if (after) titles.push(after[2]!);
  }
  return titles.map((title) => title.replace(/\\(.)/g, "$1").replace(/\s+/g, " ").trim());
}

/** The index of the parenthesis closing the one at `open`, skipping strings; -1 if none. */
function closingParen(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const char = source[i]!;
    if (char === '"' || char === "'" || char === "`") {
      for (i++; i < source.length && source[i] !== char; i++) if (source[i] === "\\") i++;
    } else if (char === "(") depth++;
    else if (char === ")" && --depth === 0) return i;
  }
  return -1;
}

/** What the index names in `file` that no it()/test() title there contains. */
export function missingTitles(file: string, wanted: string[]): string[] {
  const titles = testTitles(readFileSync(`${root}${file}`, "utf8"));
  return wanted.filter((test) => {
    const needle = test.replace(/\s+/g, " ").trim();
    return !titles.some((title) => title.includes(needle));
  });
}

describe("the index of fault promises", () => {
  it("names at least one test for every promise, or says what is missing", () => {
    for (const fault of FAULT_PROMISES) {
      expect(fault.section, fault.promise).not.toBe("");
      expect(fault.proofs.length, fault.promise).toBeGreaterThan(0);
      if (fault.gap !== undefined) expect(fault.gap.length, fault.promise).toBeGreaterThan(20);
    }
    expect(new Set(FAULT_PROMISES.map((f) => f.promise)).size).toBe(FAULT_PROMISES.length);
  });

  const byFile = new Map<string, string[]>();
  for (const fault of FAULT_PROMISES)
    for (const proof of fault.proofs)
      byFile.set(proof.file, [...(byFile.get(proof.file) ?? []), proof.test]);

  it.each([...byFile.keys()])("finds every test it names in %s", (file) => {
    expect(existsSync(`${root}${file}`), `${file} is missing`).toBe(true);
    expect(missingTitles(file, byFile.get(file)!)).toEqual([]);
  });

  it("reads titles split over lines, quoted any way, and those of it.each and it.for", () => {
    const source = [
      `it(\n  "a title that prettier\n broke",`,
      "test(`a template title`, () => {});",
      `it.each([["x", (p) => f(p)], ["y)", g]] as const)(\n  "%s is judged",`,
      `describe("not a test", () => {});`,
      `it('it\\'s quoted', () => {});`,
      `it.for([["z", h]] as [string, H][])(
  "%s is judged with its context",`,
    ].join("\n");
    expect(testTitles(source)).toEqual([
      "a title that prettier broke",
      "a template title",
      "it's quoted",
      "%s is judged",
      "%s is judged with its context",
    ]);
  });

  it("misses a title that is not there, and one that is only a describe()", () => {
    const file = "test/unit/faults-index.test.ts";
    expect(missingTitles(file, ["a test nobody wrote", "the index of fault promises"])).toEqual([
      "a test nobody wrote",
      "the index of fault promises",
    ]);
    expect(missingTitles(file, ["misses a title that is not there"])).toEqual([]);
  });
});
