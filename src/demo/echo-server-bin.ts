#!/usr/bin/env node
/**
 * stdio entry for the echo server. Env `MCPOOL_ECHO_NAME` sets `serverInfo.name`.
 * Exits on stdin EOF, which is how a stdio client asks its server to stop (spec: lifecycle,
 * "Shutdown", stdio). The SDK's StdioServerTransport does not watch for EOF itself.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { echoServer } from "./echo-server.js";

const name = process.env.MCPOOL_ECHO_NAME;
const server = echoServer(name ? { name } : {});
process.stdin.once("end", () => process.exit(0));
await server.connect(new StdioServerTransport());
