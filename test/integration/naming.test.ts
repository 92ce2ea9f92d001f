/**
 * Naming against a real server: tools of one server whose names meet under
 * qualification all stay callable, each by its own qualified name, in tools(), state()
 * and call(); none is dropped.
 */
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { nodeRow, poolMaker } from "../helpers/stdio-pool.js";
import { alive } from "../helpers/processes.js";

const { pool, made: pools } = poolMaker();

afterEach(async () => {
  const pids = pools.flatMap((p) => p.state().flatMap((s) => (s.pid ? [s.pid] : [])));
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const pid of pids) expect(alive(pid)).toBe(false);
});

function hash6(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 6);
}

describe("two tools of one server that map to one qualified name", () => {
  it("offers both: the first under the plain name, the later one under the hashed form", async () => {
    const p = pool();
    await p.sync([nodeRow("fs", "dotted-names.mjs")]);
    const hashed = `fs__fs_read_${hash6("fs__fs_read")}`;
    expect(p.tools().map((t) => t.function.name)).toEqual(["fs__fs_read", hashed, "fs__fs_write"]);
    expect(p.state()[0]?.tools.map((t) => [t.name, t.qualified])).toEqual([
      ["fs.read", "fs__fs_read"],
      ["fs_read", hashed],
      ["fs.write", "fs__fs_write"],
    ]);
    // Each name reaches its own tool on the child, which answers with its own name.
    expect(await p.call("fs__fs_read", {})).toBe("fs.read");
    expect(await p.call(hashed, {})).toBe("fs_read");
    expect(await p.call("fs__fs_write", {})).toBe("fs.write");
  });
});
