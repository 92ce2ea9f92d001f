import { describe, expect, it } from "vitest";
import { parseMcpJson } from "../../src/config/mcp-json.js";
import { McpPool } from "../../src/pool/pool.js";
import { McpPoolError } from "../../src/pool/core/errors.js";
import type { McpServerConfig } from "../../src/config/rows.js";

const OVERFLOW = 3_000_000_000;

function refusal(run: () => unknown): McpPoolError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(McpPoolError);
    return error as McpPoolError;
  }
  throw new Error("expected a refusal");
}

describe("durations a timer cannot honour", () => {
  it("are problems of the `mcpool` section and of a row in mcp.json", () => {
    const parsed = parseMcpJson(
      JSON.stringify(
        {
          mcpool: { callTimeoutMs: OVERFLOW, crashBackoffMs: 0, idleTimeoutMs: 0 },
          mcpServers: {
            slow: { command: "node", callTimeoutMs: OVERFLOW },
            fine: { command: "node", callTimeoutMs: 2 ** 31 - 1 },
          },
        },
        null,
        2,
      ),
      { env: {} },
    );
    expect(parsed.rows.map((row) => row.id)).toEqual(["fine"]);
    expect(parsed.problems.map((p) => [p.id, p.line, p.message])).toEqual([
      [
        undefined,
        3,
        "`mcpool.callTimeoutMs` must be a whole number of milliseconds from 1 to 2147483647 (about 24.8 days), the longest a timer can wait; got 3000000000",
      ],
      [
        "slow",
        8,
        "`slow`: `callTimeoutMs` must be a whole number of milliseconds from 1 to 2147483647 (about 24.8 days), the longest a timer can wait; got 3000000000",
      ],
    ]);
  });

  it("are refused by new McpPool() with invalid-arguments naming the option", () => {
    const error = refusal(() => new McpPool({ clientName: "t", callTimeoutMs: OVERFLOW }));
    expect(error.code).toBe("invalid-arguments");
    expect(error.message).toMatch(/^`callTimeoutMs` must be a whole number of milliseconds/);
    expect(refusal(() => new McpPool({ clientName: "t", connectTimeoutMs: 0 })).message).toMatch(
      /`connectTimeoutMs`/,
    );
    expect(
      refusal(() => new McpPool({ clientName: "t", conversations: { endTimeoutMs: -5 } })).message,
    ).toMatch(/`conversations\.endTimeoutMs`/);
  });

  it("are not refused where 0 means off, nor at the longest a timer waits", async () => {
    const pool = new McpPool({
      clientName: "t",
      crashBackoffMs: 0,
      syncDebounceMs: 0,
      idleTimeoutMs: 0,
      callTimeoutMs: 2 ** 31 - 1,
    });
    await pool.close();
  });

  it("are refused in a row given to sync() and in a call's timeoutMs", async () => {
    const pool = new McpPool({ clientName: "t", log: {} });
    try {
      const row: McpServerConfig = {
        id: "slow",
        transport: "stdio",
        command: "node",
        callTimeoutMs: OVERFLOW,
      };
      await expect(pool.sync([row])).rejects.toMatchObject({
        code: "invalid-arguments",
        message: expect.stringMatching(/^`slow`: `callTimeoutMs` must be/) as unknown,
      });
      expect(pool.state()).toEqual([]);
      await expect(pool.call("any__tool", {}, { timeoutMs: OVERFLOW })).rejects.toMatchObject({
        code: "invalid-arguments",
        message: expect.stringMatching(/^`timeoutMs` must be/) as unknown,
      });
    } finally {
      await pool.close();
    }
  });
});
