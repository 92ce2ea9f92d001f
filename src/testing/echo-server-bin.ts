#!/usr/bin/env node
/**
 * The echo server's stdio entry at its former place. Starter `mcp.json` files that earlier
 * daemons wrote name this path absolutely; they keep working. The server is src/demo's.
 */
import "../demo/echo-server-bin.js";
