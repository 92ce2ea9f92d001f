/**
 * The scale.mjs set: servers of generated tools — a small vocabulary, so descriptions
 * differ and search has something to rank — served by the SDK's Server, for scale.mjs and
 * catalog.mjs alike.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** Tools per generated server. */
export const TOOLS = 50;

const VERBS = ["read", "write", "list", "search", "create", "delete", "update", "fetch", "send"];
const NOUNS = ["file", "issue", "message", "record", "page", "branch", "ticket", "image", "user"];
const PLACES = ["directory", "repository", "channel", "table", "site", "queue", "bucket", "team"];

export function generatedTools(server) {
  return Array.from({ length: TOOLS }, (_, i) => {
    const verb = VERBS[(server + i) % VERBS.length];
    const noun = NOUNS[(server * 7 + i * 3) % NOUNS.length];
    const place = PLACES[(server * 5 + i) % PLACES.length];
    return {
      name: `${verb}_${noun}_${i}`,
      description: `${verb[0].toUpperCase()}${verb.slice(1)}s a ${noun} in the given ${place}. Returns the ${noun} as JSON with its id, owner and timestamps.`,
      inputSchema: {
        type: "object",
        properties: {
          [`${place}Id`]: { type: "string", description: `The ${place} to look in.` },
          [`${noun}Id`]: { type: "string", description: `The ${noun}.` },
          limit: { type: "integer", minimum: 1, maximum: 100 },
        },
        required: [`${place}Id`],
      },
      annotations: { readOnlyHint: verb === "read" || verb === "list" || verb === "fetch" },
    };
  });
}

export function generatedServer(server) {
  const tools = generatedTools(server);
  return () => {
    const s = new Server(
      { name: `gen${server}`, version: "1.0.0" },
      { capabilities: { tools: {} } },
    );
    s.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    s.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: "text", text: "ok" }] }));
    return s;
  };
}
