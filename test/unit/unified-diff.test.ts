import { describe, expect, it } from "vitest";
import { unifiedDiff } from "../../src/cli/hosts/unified-diff.js";

const lines = (n: number): string[] => Array.from({ length: n }, (_, i) => `line ${i}`);

describe("unifiedDiff", () => {
  it("prints removals before additions with three lines of context", () => {
    expect(unifiedDiff("a\nb\nc\n", "a\nx\nc\nd\n", "f", "g")).toBe(
      "--- f\n+++ g\n@@ -1,3 +1,4 @@\n a\n-b\n+x\n c\n+d\n",
    );
  });

  it("is empty for the same lines", () => {
    expect(unifiedDiff("a\nb\n", "a\nb", "f", "g")).toBe("");
  });

  it("diffs edits far apart in a long file (a ~/.claude.json) hunk by hunk", () => {
    const before = lines(20_000);
    const after = [...before];
    after[5] = "changed top";
    after[19_990] = "changed bottom";
    after.splice(10_000, 0, "inserted");
    const diff = unifiedDiff(`${before.join("\n")}\n`, `${after.join("\n")}\n`, "a", "b");
    expect(diff.match(/^@@ .* @@$/gm)).toEqual([
      "@@ -3,7 +3,7 @@",
      "@@ -9998,6 +9998,7 @@",
      "@@ -19988,7 +19989,7 @@",
    ]);
    expect(diff.split("\n").filter((l) => /^[-+][^-+]/.test(l))).toEqual([
      "-line 5",
      "+changed top",
      "+inserted",
      "-line 19990",
      "+changed bottom",
    ]);
  });

  it("shows two unrelated texts as a whole replacement", () => {
    const diff = unifiedDiff("a\nb\n", "c\nd\n", "f", "g");
    expect(diff).toBe("--- f\n+++ g\n@@ -1,2 +1,2 @@\n-a\n-b\n+c\n+d\n");
  });
});
