/**
 * The browser-safe entry (`mcpool/servers`): row types, sameConnection and validation.
 * Nothing reachable from here imports Node, the MCP SDK or the pool; a test walks the
 * import graph to keep it so.
 */
export * from "./rows.js";
export * from "./same-connection.js";
export * from "./conversation.js";
export * from "./validate.js";
export * from "./mcp-json.js";
export { setPinInMcpJson } from "./mcp-json-pin.js";
export * from "./placeholders.js";
export { isAllowedRemoteUrl, remoteUrlProblem, configuredUrlProblem } from "./url-policy.js";
