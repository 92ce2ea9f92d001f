#!/usr/bin/env node
/**
 * The `mcpool` executable. It loads main.ts — the CLI, its imports and the MCP SDK — only
 * when the lean bridge (lean-bridge.ts) cannot serve argv as a byte pipe. `mcpool
 * echo-server` is the built-in echo server on stdin and stdout (what the starter mcp.json
 * runs): it loads the server and nothing of the CLI.
 */
import { runLeanBridge } from "./lean-bridge.js";

if (process.argv[2] === "echo-server" && process.argv.length === 3) {
  void import("../demo/echo-server-bin.js");
} else {
  runLeanBridge(() => void import("./main.js"));
}
