/**
 * What the 2026-07-28 Streamable HTTP binding asks of a modern request beyond its body,
 * around the fetch an http row's transport uses: the `MCP-Protocol-Version`, `Mcp-Method`
 * and `Mcp-Name` headers, read from the body it sends (a request names its era by its
 * `_meta` envelope: a legacy request passes untouched), and a 4xx whose body is a JSON-RPC
 * error answered in-band, as a modern client takes it, so the caller sees the server's
 * error (an UnsupportedProtocolVersionError with the versions it speaks) rather than an
 * HTTP status. Only an error of that very request: one without an id could be answered to
 * no one. 401 and 403 stay what they are: the sign-in's to handle. A legacy `initialize`
 * refused that way (a modern-only server's -32022, naming the revisions it speaks) is
 * answered in-band too, so the era's verdict reads the server's code and data, not the
 * SDK's error text. A tools/call also carries the `Mcp-Param-*` headers its tool's marks
 * ask for (below).
 */
import { META } from "../core/era.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { FetchLike } from "./transport.js";
import { withBody } from "./fetch.js";

/** The method whose `params` field names what `Mcp-Name` carries. */
const NAME_FIELD: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
};

interface Claimed {
  id?: unknown;
  method?: unknown;
  params?: { _meta?: Record<string, unknown>; [key: string]: unknown };
}

/** The body's request when it claims the modern era, else undefined (not parsed at all when it cannot). */
function modernRequestOf(body: unknown): Claimed | undefined {
  if (typeof body !== "string" || !body.includes(META.protocolVersion)) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  const claimed = message as Claimed;
  const version = claimed?.params?._meta?.[META.protocolVersion];
  return typeof claimed?.method === "string" && typeof version === "string" ? claimed : undefined;
}

/** The body's legacy `initialize` request, else undefined (not parsed when it cannot be one). */
function handshakeOf(body: unknown): Claimed | undefined {
  if (typeof body !== "string" || !body.includes('"initialize"')) return undefined;
  try {
    const message = JSON.parse(body) as Claimed;
    return message?.method === "initialize" && message.id !== undefined ? message : undefined;
  } catch {
    return undefined;
  }
}

/** `fetch` with the modern binding's headers; a tools/call's `Mcp-Param-*` from `book`. */
export function modernFetch(fetch: FetchLike, book?: ParamBook): FetchLike {
  return async (url, init) => {
    const request = init?.method === "POST" ? modernRequestOf(init.body) : undefined;
    if (request === undefined) {
      const handshake = init?.method === "POST" ? handshakeOf(init.body) : undefined;
      const response = await fetch(url, init);
      return handshake === undefined ? response : inBand(response, handshake.id);
    }
    const method = request.method as string;
    const headers = new Headers(init?.headers);
    headers.set("mcp-protocol-version", String(request.params?._meta?.[META.protocolVersion]));
    headers.set("mcp-method", method);
    const field = NAME_FIELD[method];
    const name = field === undefined ? undefined : request.params?.[field];
    if (typeof name === "string") headers.set("mcp-name", headerValue(name));
    if (method === "tools/call" && typeof name === "string" && book !== undefined) {
      const params = book.headersFor(name, request.params?.arguments);
      for (const [header, value] of Object.entries(params)) headers.set(header, value);
    }
    const response = await fetch(url, { ...init, headers });
    return inBand(response, request.id);
  };
}

/** A 4xx carrying the JSON-RPC error of request `id`, as the 200 it means in the modern era. */
async function inBand(response: Response, id: unknown): Promise<Response> {
  const status = response.status;
  if (status < 400 || status >= 500 || status === 401 || status === 403) return response;
  if (!(response.headers.get("content-type") ?? "").includes("application/json")) return response;
  const text = await response.text();
  let body: { jsonrpc?: unknown; error?: { code?: unknown }; id?: unknown } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  const answered =
    body?.jsonrpc === "2.0" && typeof body.error?.code === "number" && body.id === id;
  return withBody(response, text, { status: answered ? 200 : status });
}

/*
 * Headers from tool parameters (2026-07-28 Streamable HTTP, "Custom Headers from Tool
 * Parameters", SEP-2243): a tool may mark properties of its inputSchema with
 * `x-mcp-header: <Name>`, and a client mirrors each such argument of a tools/call into an
 * `Mcp-Param-<Name>` header, so a proxy can route on it without reading the body. Marks
 * are checked once per listing — a name that is not an RFC 9110 token, used twice (in any
 * case), on a property that is not a string, integer or boolean, or anywhere but a chain of
 * `properties` makes the tool invalid, and a client must not offer it — and a value that
 * cannot ride as a plain field value goes as `=?base64?…?=`. Pure, but for the book a
 * transport keeps of its tools' marks, which the fetch reads as it sends.
 */

/**
 * A header value as the binding allows it: plain printable ASCII with no edge whitespace,
 * else (and for what would read as one) its Base64 sentinel `=?base64?…?=` of the UTF-8.
 */
export function headerValue(value: string): string {
  const plain =
    /^[\x20-\x7e]*$/.test(value) &&
    value.trim() === value &&
    !(value.startsWith("=?base64?") && value.endsWith("?="));
  return plain ? value : `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

const MARK = "x-mcp-header";
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE = new Set(["string", "integer", "boolean"]);
/** Keywords whose subschemas are not reached by `properties` alone: a mark there is invalid. */
const ELSEWHERE = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
];
/** Of those, the ones whose value is a map of names to subschemas. */
const MAPS = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"]);

/** One marked property: where its argument sits, and the header it goes in. */
export interface ParamHeader {
  path: string[];
  name: string;
}

export type Marks = { ok: true; headers: ParamHeader[] } | { ok: false; reason: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The marks of a tool's `inputSchema`, or why they make the tool invalid. */
export function paramMarks(inputSchema: unknown): Marks {
  const headers: ParamHeader[] = [];
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (!isObject(node)) return undefined;
    const where = path.length === 0 ? "the schema's root" : `property ${path.join(".")}`;
    if (MARK in node) {
      const name = node[MARK];
      if (!reachable || path.length === 0) {
        return `${MARK} on ${where}, which is not reached by a chain of "properties"`;
      }
      if (typeof name !== "string" || !TOKEN.test(name)) {
        return `${MARK} ${JSON.stringify(name)} on ${where} is not an HTTP token`;
      }
      if (typeof node.type !== "string" || !PRIMITIVE.has(node.type)) {
        return `${MARK} "${name}" on ${where} of type ${JSON.stringify(node.type ?? null)} (string, integer or boolean only)`;
      }
      const twin = seen.get(name.toLowerCase());
      if (twin !== undefined) return `${MARK} "${name}" is declared twice (also as "${twin}")`;
      seen.set(name.toLowerCase(), name);
      headers.push({ path, name });
    }
    if (isObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault !== undefined) return fault;
      }
    }
    for (const keyword of ELSEWHERE) {
      const sub = node[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub)
        ? sub
        : MAPS.has(keyword) && isObject(sub)
          ? Object.values(sub)
          : [sub];
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${keyword}>`], false);
        if (fault !== undefined) return fault;
      }
    }
    return undefined;
  };
  const reason = visit(inputSchema, [], true);
  return reason === undefined ? { ok: true, headers } : { ok: false, reason };
}

/** A primitive argument as a header's text; undefined for what gets no header (null, absent, other). */
function asText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number" && Number.isFinite(value)) {
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
  }
  return undefined;
}

/** The `Mcp-Param-*` headers of one call with `args`. */
export function paramHeaders(marks: readonly ParamHeader[], args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { path, name } of marks) {
    let value: unknown = args;
    for (const key of path) value = isObject(value) ? value[key] : undefined;
    const text = asText(value);
    if (text !== undefined) out[`Mcp-Param-${name}`] = headerValue(text);
  }
  return out;
}

/** The tools of a listing a client may offer, and why each other is not. */
export function offeredTools(tools: Tool[]): { offered: Tool[]; refused: string[] } {
  const offered: Tool[] = [];
  const refused: string[] = [];
  for (const tool of tools) {
    const read = paramMarks(tool.inputSchema);
    if (read.ok) offered.push(tool);
    else refused.push(`tool "${tool.name}" is not offered: ${read.reason}`);
  }
  return { offered, refused };
}

/**
 * What one connection knows of its tools' marks: filled by each listing, read by the
 * fetch for each tools/call. Lives on the transport (see `paramBookOf`), so the fetch
 * made before the client and the client that lists meet there.
 */
export class ParamBook {
  #marks = new Map<string, ParamHeader[]>();

  /** The marks of `tools`, the whole list, in place of what was known. */
  learn(tools: Tool[]): void {
    const marks = new Map<string, ParamHeader[]>();
    for (const tool of tools) {
      const read = paramMarks(tool.inputSchema);
      if (read.ok && read.headers.length > 0) marks.set(tool.name, read.headers);
    }
    this.#marks = marks;
  }

  /** The headers of a call of `tool` with `args`; none for a tool with no marks. */
  headersFor(tool: string, args: unknown): Record<string, string> {
    const marks = this.#marks.get(tool);
    return marks === undefined ? {} : paramHeaders(marks, args);
  }
}

const BOOKS = new WeakMap<object, ParamBook>();

/** The book of `transport`, made with it (http-transport.ts); undefined on one that keeps none. */
export function paramBookOf(transport: object | undefined): ParamBook | undefined {
  return transport === undefined ? undefined : BOOKS.get(transport);
}

export function keepParamBook(transport: object, book: ParamBook): void {
  BOOKS.set(transport, book);
}
