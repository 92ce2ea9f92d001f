/**
 * Results: how a CallToolResult becomes the one string a message array holds,
 * and how that string is cut to a budget.
 *
 * A block that came with text arrives as that text, wherever the block keeps it; a block
 * with none is named rather than dropped, so a model that asked for a screenshot is told
 * it got one instead of being handed an empty string.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { McpPoolError } from "../core/errors.js";
import { canonicalJson } from "../core/fingerprint.js";
import { truncateText } from "../core/truncate.js";

/** What an empty result reads as, so the model does not take silence for a failure. */
export const NO_OUTPUT = "(no output)";

type Block = CallToolResult["content"][number];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether `value` has what the pool reads of a tool result: a content array (or none) of
 * blocks with a `type`, the text of a text block a string, an object `structuredContent`, a
 * boolean `isError`. Nothing else is looked at: the rest goes to the caller as the server
 * sent it, and the caller's own SDK reads it there.
 */
function isForwardable(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const { content, structuredContent, isError } = value;
  if (structuredContent !== undefined && !isRecord(structuredContent)) return false;
  if (isError !== undefined && typeof isError !== "boolean") return false;
  if (content === undefined) return true;
  if (!Array.isArray(content)) return false;
  for (const block of content as unknown[]) {
    if (!isRecord(block) || typeof block.type !== "string") return false;
    if (block.type === "text" && typeof block.text !== "string") return false;
  }
  return true;
}

/**
 * A tool's answer as the pool forwards it: the checks above in one pass and the
 * result kept as received, where the SDK's CallToolResultSchema parsed every block with zod
 * and copied the whole result for a value that is only forwarded. A result that came
 * without `content` gets the empty list the SDK's schema gave it. The tool's output schema
 * is checked by the client's `callTool` (output-schema.ts).
 */
export function forwardable(result: unknown): CallToolResult {
  if (!isForwardable(result)) throw new Error("the tool result is not a CallToolResult");
  const answer = result as CallToolResult;
  return answer.content === undefined ? { ...answer, content: [] } : answer;
}

/** Bytes a base64 string decodes to, without decoding it. */
function base64Bytes(data: string): number {
  const compact = data.replace(/\s+/g, "");
  const padding = compact.endsWith("==") ? 2 : compact.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((compact.length * 3) / 4) - padding);
}

/** `512 B`, `42 KB`, `3.4 MB`: binary units, rounded to what a reader needs. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const kb = Math.round(bytes / 1024);
  if (kb < 1024) return `${kb} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function omitted(type: string, mimeType: string | undefined, data: unknown): string {
  const size = formatBytes(typeof data === "string" ? base64Bytes(data) : 0);
  return `[${type}${mimeType ? ` ${mimeType}` : ""}, ${size} omitted]`;
}

/**
 * One block as text: text (and a resource's text) as is, anything else as a bracketed note
 * of what was left out.
 */
function flattenBlock(block: Block): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "resource": {
      const resource = block.resource as {
        uri: string;
        mimeType?: string;
        text?: unknown;
        blob?: unknown;
      };
      if (typeof resource.text === "string") return resource.text;
      if (typeof resource.blob === "string") {
        return omitted(`resource ${resource.uri}`, resource.mimeType, resource.blob);
      }
      return "[resource content]";
    }
    case "resource_link":
      return `[resource_link ${block.uri} — ${block.name}${block.description ? `: ${block.description}` : ""}]`;
    case "image":
    case "audio":
      return omitted(block.type, block.mimeType, block.data);
    default:
      // A block type newer than this code: named, so the model knows something came back.
      return `[${String((block as { type: unknown }).type)} content]`;
  }
}

/** Whether text says nothing but the structure, as JSON (usually pretty-printed). */
function mirrors(text: string, structured: Record<string, unknown>): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  return canonicalJson(parsed) === canonicalJson(structured);
}

/**
 * The text of a tool result, as `call()` returns it. Blocks are flattened one per line.
 * A result with no content but a `structuredContent` is that structure as compact JSON.
 * Text blocks win over the structure, except when together they only mirror it (the
 * spec asks servers to send that text, and most pretty-print it): then they read as the
 * compact JSON, which says the same in fewer tokens. Nothing at all is `(no output)`.
 */
export function resultText(result: CallToolResult): string {
  const blocks: readonly Block[] = result.content ?? [];
  const structured = result.structuredContent;
  let parts = blocks.map(flattenBlock);

  if (structured !== undefined) {
    const textIndexes = blocks.flatMap((block, i) => (block.type === "text" ? [i] : []));
    const text = textIndexes.map((i) => parts[i]).join("\n");
    if (textIndexes.length > 0 && mirrors(text, structured)) {
      const first = textIndexes[0];
      const compact = JSON.stringify(structured);
      parts = parts.flatMap((part, i) =>
        i === first ? [compact] : textIndexes.includes(i) ? [] : [part],
      );
    }
  }

  const flat = parts.join("\n");
  if (flat !== "") return flat;
  if (structured !== undefined) return JSON.stringify(structured);
  return NO_OUTPUT;
}

/** A call's result once finished: the result, its text as call() returns it, and its size. */
export interface FinishedResult {
  result: CallToolResult;
  /** The flattened text, cut to the budget (uncut when raw). */
  text: string;
  /** The length of the flattened text before any cut. */
  chars: number;
  truncated: boolean;
}

/**
 * A raw call's finished result: the caller takes the result itself, so its text (for a
 * structured result, two JSON parses and canonicalisations) is only made when read — by a
 * `call` event's `chars`, say — and then once.
 */
function rawFinished(result: CallToolResult): FinishedResult {
  let full: string | undefined;
  return {
    result,
    get text() {
      return (full ??= resultText(result));
    },
    get chars() {
      return this.text.length;
    },
    truncated: false,
  };
}

/**
 * The one finishing step of every call path (pool, conversation, result cache): flatten,
 * then cut to `maxChars`. A result the server marked `isError` is thrown as
 * `tool-error` with its text cut the same way, unless the caller asked for the raw result.
 * `full` is the flattened text when the caller has it already (a cached answer).
 */
export function finishResult(
  result: CallToolResult,
  options: { serverId: string; maxChars: number | undefined; raw?: boolean | undefined },
  given?: string,
): FinishedResult {
  if (options.raw && given === undefined) return rawFinished(result);
  const full = given ?? resultText(result);
  if (result.isError && !options.raw) {
    throw new McpPoolError("tool-error", truncateText(full, options.maxChars), {
      serverId: options.serverId,
    });
  }
  const text = options.raw ? full : truncateText(full, options.maxChars);
  return { result, text, chars: full.length, truncated: text !== full };
}

/** The result budget of a call, in chars: the call's, else the row's, else the pool's; 0 none. */
export function resultBudget(...budgets: readonly (number | null | undefined)[]): number {
  for (const budget of budgets) if (budget !== undefined && budget !== null) return budget;
  return 0;
}
