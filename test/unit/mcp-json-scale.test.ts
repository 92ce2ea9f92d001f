import { describe, expect, it } from "vitest";
import { parseMcpJson, parseMcpJsonInTurns } from "../../src/config/mcp-json.js";

/** `count` rows, every `badEvery`-th with a command that is not a string. */
function manyRows(count: number, badEvery = 1000): Record<string, unknown> {
  const servers: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    servers[`row-${i}`] =
      i % badEvery === 7
        ? { command: 42 }
        : { command: "node", args: ["server.js", String(i)], lazy: true };
  }
  return servers;
}

describe("parseMcpJson on large files", () => {
  it("places each bad row at its line whether the file is strict JSON or JSONC", () => {
    const strict = JSON.stringify({ mcpServers: manyRows(3000) }, null, 2);
    // A comment on the first line sends the same rows down the JSONC path, one line lower.
    const jsonc = `// generated\n${strict}`;
    const a = parseMcpJson(strict, { env: {} });
    const b = parseMcpJson(jsonc, { env: {} });
    expect(a.rows).toHaveLength(2997);
    expect(a.problems.map((p) => p.id)).toEqual(["row-7", "row-1007", "row-2007"]);
    expect(b.problems.map((p) => ({ ...p, line: p.line! - 1 }))).toEqual(a.problems);
    const lines = strict.split("\n");
    for (const problem of a.problems) {
      expect(lines[problem.line! - 1]!.trim()).toBe(`"${problem.id}": {`);
      expect(problem.column).toBe(5);
    }
  });

  it("parseMcpJsonInTurns pauses between batches of rows and finds the same as parseMcpJson", async () => {
    const text = JSON.stringify({ mcpServers: manyRows(2600) });
    let pauses = 0;
    const inTurns = await parseMcpJsonInTurns(
      text,
      () => {
        pauses++;
        return Promise.resolve();
      },
      { env: {} },
    );
    expect(inTurns).toEqual(parseMcpJson(text, { env: {} }));
    expect(pauses).toBe(5);
  });
});
