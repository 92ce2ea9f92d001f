#!/usr/bin/env node
/**
 * The `mcpool` executable. It loads main.ts — the CLI, its imports and the MCP SDK — only
 * when the lean bridge (lean-bridge.ts) cannot serve argv as a byte pipe.
 */
import { runLeanBridge } from "./lean-bridge.js";

runLeanBridge(() => void import("./main.js"));
