/**
 * The lean bridge's argv: it takes only the argv a byte pipe can serve, and leaves
 * the rest to the full CLI; its socket is mcpool-client's default (paths.js, not the client).
 */
import { describe, expect, it } from "vitest";
import { mcpSocketPath } from "../../src/bridge/lean/mcp-socket-paths.js";
import { leanBridgeSocket } from "../../src/cli/lean-bridge.js";

describe("the lean bridge", () => {
  it("pipes bridge, bridge --server ID, bridge --catalog[=auto] and --socket PATH; leaves everything else to the CLI", () => {
    const env = { MCPOOL_SOCKET: "/run/m/mcpool.sock" };
    expect(leanBridgeSocket(["bridge"], env)).toBe("/run/m/mcp/@pool.sock");
    expect(leanBridgeSocket(["bridge", "--server", "echo"], env)).toBe("/run/m/mcp/echo.sock");
    expect(leanBridgeSocket(["bridge", "--server", "echo", "--socket", "/s/d.sock"], env)).toBe(
      "/s/mcp/echo.sock",
    );
    expect(leanBridgeSocket(["bridge", "--catalog"], env)).toBe("/run/m/mcp/@catalog.sock");
    expect(leanBridgeSocket(["bridge", "--catalog=auto", "--socket", "/s/d.sock"], env)).toBe(
      "/s/mcp/@catalog-auto.sock",
    );
    for (const argv of [
      ["bridge", "--server", "echo", "--catalog"],
      ["bridge", "--catalog", "--catalog=auto"],
      ["bridge", "--catalog=auto", "--catalog-tokens", "10"],
      ["status"],
      ["bridge", "--http", "0"],
      ["bridge", "--servers", "a,b"],
      ["bridge", "--server"],
      ["bridge", "--server", "a", "--server", "b"],
      ["bridge", "--server", "../x"],
      ["bridge", "--help"],
    ]) {
      expect(leanBridgeSocket(argv, env)).toBeUndefined();
    }
  });

  it("gives no socket to an id that is no file name or a path too long for sun_path", () => {
    expect(mcpSocketPath("/d/mcpool.sock", "a/b")).toBeUndefined();
    expect(mcpSocketPath("/d/mcpool.sock", ".hidden")).toBeUndefined();
    expect(mcpSocketPath(`/${"d".repeat(100)}/mcpool.sock`, "echo")).toBeUndefined();
  });
});
