import { createHash } from "node:crypto";

import { describe, expect, it } from "vitest";

import { qualifiedName, qualifiedNames } from "../../src/pool/catalog/naming.js";

function hash6(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 6);
}

describe("qualifiedName", () => {
  it("joins slug and tool with a double underscore", () => {
    expect(qualifiedName("echo", "add")).toBe("echo__add");
  });

  it("returns a name that already fits and qualifies byte for byte", () => {
    const name = qualifiedName("My_server-2", "Read-File_v2");
    expect(name).toBe("My_server-2__Read-File_v2");
    const exact = "s".repeat(10) + "__" + "t".repeat(52);
    expect(qualifiedName("s".repeat(10), "t".repeat(52))).toBe(exact);
  });

  it("turns every character outside [A-Za-z0-9_-] into an underscore", () => {
    expect(qualifiedName("fs", "fs.read")).toBe("fs__fs_read");
    expect(qualifiedName("fs", "read file/now")).toBe("fs__read_file_now");
    expect(qualifiedName("fs", "café")).toBe("fs__caf_");
    expect(qualifiedName("fs", "emoji😀")).toBe("fs__emoji_");
  });

  it("keeps a name of exactly 64 characters whole", () => {
    const tool = "t".repeat(64 - "slug__".length);
    const name = qualifiedName("slug", tool);
    expect(name).toHaveLength(64);
    expect(name).toBe(`slug__${tool}`);
  });

  it("shortens a name of 65 characters to 57, an underscore and 6 hex of the original's hash", () => {
    const tool = "t".repeat(65 - "slug__".length);
    const original = `slug__${tool}`;
    const name = qualifiedName("slug", tool);
    expect(name).toHaveLength(64);
    expect(name).toBe(`${original.slice(0, 57)}_${hash6(original)}`);
    expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("keeps long names that share a 64-character prefix distinct", () => {
    const prefix = "x".repeat(70);
    const a = qualifiedName("srv", `${prefix}_alpha`);
    const b = qualifiedName("srv", `${prefix}_beta`);
    expect(a).toHaveLength(64);
    expect(b).toHaveLength(64);
    expect(a.slice(0, 57)).toBe(b.slice(0, 57));
    expect(a).not.toBe(b);
  });

  it("hashes the name before substitution, so long a.b and a_b variants stay distinct", () => {
    const long = "y".repeat(70);
    const dotted = qualifiedName("srv", `a.b${long}`);
    const underscored = qualifiedName("srv", `a_b${long}`);
    expect(dotted.slice(0, 57)).toBe(underscored.slice(0, 57));
    expect(dotted).not.toBe(underscored);
    expect(dotted).toBe(`${`srv__a_b${long}`.slice(0, 57)}_${hash6(`srv__a.b${long}`)}`);
  });

  it("is deterministic", () => {
    const tool = "z".repeat(100);
    expect(qualifiedName("s", tool)).toBe(qualifiedName("s", tool));
  });
});

describe("qualifiedNames", () => {
  it("gives the later of two tools meeting on one name the hashed form of its own original", () => {
    expect(qualifiedNames("fs", ["fs.read", "fs_read", "write"])).toEqual([
      "fs__fs_read",
      `fs__fs_read_${hash6("fs__fs_read")}`,
      "fs__write",
    ]);
    // The order decides which one keeps the plain name.
    expect(qualifiedNames("fs", ["fs_read", "fs.read"])).toEqual([
      "fs__fs_read",
      `fs__fs_read_${hash6("fs__fs.read")}`,
    ]);
  });

  it("keeps a hashed form within 64 characters", () => {
    const tool = "t".repeat(64 - "s__".length);
    const [first, second] = qualifiedNames("s", [tool, tool.replace(/^t/u, ".")]);
    expect(first).toBe(`s__${tool}`);
    expect(second).toHaveLength(64);
    expect(second).not.toBe(first);
  });

  it("leaves out a tool listed twice under one name, and nothing else", () => {
    expect(qualifiedNames("s", ["a", "a", "b"])).toEqual(["s__a", undefined, "s__b"]);
  });
});
