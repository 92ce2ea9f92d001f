/**
 * A catalog session's found tools: bounded, least recently used leaving first,
 * and a change only when the listed set changes.
 */
import { describe, expect, it } from "vitest";
import { FoundTools, isMetaTool, metaTools } from "../../src/bridge/catalog/on-demand.js";

describe("a session's found tools", () => {
  it("keeps at most its limit, the least recently found or called leaving first", () => {
    const found = new FoundTools(3);
    expect(found.add(["a", "b", "c"])).toBe(true);
    found.touch("a");
    expect(found.add(["d"])).toBe(true);
    expect([...found]).toEqual(["c", "a", "d"]);
    expect(found.has("b")).toBe(false);
  });

  it("says nothing changed when a search finds only what is listed already", () => {
    const found = new FoundTools(3);
    found.add(["a", "b"]);
    expect(found.add(["b", "a"])).toBe(false);
    expect([...found]).toEqual(["b", "a"]);
  });

  it("names the pool's own tools so that no qualified name can be one of them", () => {
    const names = metaTools().map((t) => t.name);
    expect(names).toEqual(["search_tools", "describe_tool", "call_tool"]);
    for (const name of names) {
      expect(isMetaTool(name)).toBe(true);
      expect(name).not.toContain("__");
    }
    expect(isMetaTool("everything__search_tools")).toBe(false);
  });
});
