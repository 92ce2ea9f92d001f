/**
 * toolsFingerprint: a hash of what a server listed, so an
 * operator can approve a list and notice when it changes under them — the "rug pull".
 *
 * It covers every field a host decides on: name, title, description, input and output
 * schema, and annotations (a flipped `destructiveHint` is the same attack as a rewritten
 * description). It does not move when the same tools arrive in another order, or when a
 * schema's keys are serialised in another order. `_meta`, icons and `execution` are left
 * out: they say nothing a model or an approval acts on.
 */
import { createHash } from "node:crypto";

import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * JSON with every object's keys sorted (by UTF-16 code unit), so two values that are
 * equal as JSON serialise identically. Otherwise as `JSON.stringify`: `undefined`,
 * functions and symbols are dropped from objects and become `null` in arrays, non-finite
 * numbers become `null`, and `toJSON` is honoured. Top-level `undefined` gives `"null"`.
 */
export function canonicalJson(value: unknown): string {
  return serialise(value) ?? "null";
}

function serialise(value: unknown): string | undefined {
  if (value !== null && typeof value === "object" && "toJSON" in value) {
    const toJSON = (value as { toJSON: unknown }).toJSON;
    if (typeof toJSON === "function") value = (toJSON as () => unknown).call(value);
  }
  if (value === undefined || typeof value === "function" || typeof value === "symbol") {
    return undefined;
  }
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => serialise(item) ?? "null").join(",")}]`;
  }
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = serialise(record[key]);
    if (item !== undefined) members.push(`${JSON.stringify(key)}:${item}`);
  }
  return `{${members.join(",")}}`;
}

/** The part of a tool the fingerprint covers, as canonical JSON. */
function toolKey(tool: Tool): string {
  return canonicalJson({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  });
}

/** SHA-256 hex over a tool list, independent of tool order and of key order. */
export function toolsFingerprint(tools: readonly Tool[]): string {
  const keys = tools.map(toolKey).sort();
  return createHash("sha256")
    .update(`[${keys.join(",")}]`, "utf8")
    .digest("hex");
}
