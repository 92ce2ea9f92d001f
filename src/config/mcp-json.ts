/**
 * Reading `mcp.json` as users write it: Claude Desktop / Cursor / Claude Code
 * `{"mcpServers":{…}}`, VS Code `{"servers":{…}}`, a bare name-keyed map, or one bare body
 * with a `name`. JSONC comments and trailing commas are accepted; a syntax error carries
 * its line and column. Pool-wide options live beside the servers under `"mcpool"`.
 *
 * Each key becomes the row's id (and its label unless one is given). A row that fails
 * validation is reported with its position and left out; the others still apply.
 * Browser-safe: jsonc-parser is pure JavaScript.
 */
import {
  findNodeAtLocation,
  parseTree,
  printParseErrorCode,
  type Node,
  type ParseError,
} from "jsonc-parser";
import {
  duplicateKeys,
  mayRepeatKeys,
  positionOf,
  SYNTAX_REASONS,
  withoutBom,
} from "./json-text.js";
import { poolSectionProblems } from "./pool-section.js";
import { defaultEnvironment, unsetVariables, type Environment } from "./placeholders.js";
import type { McpServerConfig } from "./rows.js";
import { closestKey, typoMessage } from "./suggest.js";
import { slugLoserProblem, slugLosers, validateServerConfig } from "./validate.js";

export interface ConfigProblem {
  message: string;
  /** The row the problem belongs to, when it belongs to one. */
  id?: string;
  /** 1-based position in the file, where it is known. */
  line?: number;
  column?: number;
}

export interface McpJson {
  /** Valid rows, in file order. */
  rows: McpServerConfig[];
  /** The `"mcpool"` section, unvalidated: the daemon reads what it knows. */
  pool: Record<string, unknown>;
  /** Rows left out and why, with positions. */
  problems: ConfigProblem[];
  /** What does not stop a row: a placeholder whose variable is unset and has no default. */
  warnings: ConfigProblem[];
}

export interface McpJsonOptions {
  /**
   * The environment placeholders will be filled from. Rows keep `${VAR}` as written
   * whatever this holds — they are expanded only when a transport is built —
   * so it only names, in `warnings`, the variables a row reads that are unset here and
   * have no default. Default: process.env where there is one, nothing in a browser.
   */
  env?: Environment;
  /**
   * Ids of the rows serving now (the daemon's last good configuration): when two rows want
   * one slug, the serving one keeps it and the other is the one left out.
   * Default: none, and the first in the file keeps it.
   */
  serving?: readonly string[];
}

/**
 * The file is not JSON(C): nothing in it can be trusted, so nothing of it applies. `reason`
 * is the sentence alone, for a caller that prints the position its own way (`file:6:30:`);
 * `message` carries the position once.
 */
export class ConfigSyntaxError extends Error {
  override readonly name = "ConfigSyntaxError";
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${reason} at line ${line}, column ${column}`);
  }
}

/** The keys a body may hold: its transport's fields, the options, and what hosts write. */
const BODY_KEYS: readonly string[] = [
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "httpUrl",
  "headers",
  "auth",
  "type",
  "transport",
  "disabled",
  "name",
  "$schema",
];

/** The keys that hold the servers or the pool's options at the top of the file. */
const TOP_LEVEL_KEYS = ["mcpServers", "servers", "mcpool", "inputs", "$schema"];

/** Option keys a body may carry beside its transport fields, passed through as written. */
const PASSTHROUGH = [
  "slug",
  "label",
  "enabled",
  "connectTimeoutMs",
  "callTimeoutMs",
  "probeTimeoutMs",
  "maxResultChars",
  "maxMemoryMb",
  "hiddenTools",
  "alwaysLoad",
  "trustAnnotations",
  "coerceArguments",
  "idleTimeoutMs",
  "lazy",
  "hooks",
  "pin",
  "protocol",
  "session",
  "conversation",
] as const;

const HTTP_TYPES = new Set(["http", "streamable-http", "streamableHttp", "streamable_http"]);

type Body = Record<string, unknown>;

function isObject(value: unknown): value is Body {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Rows validated between two pauses of parseMcpJsonInTurns: a few milliseconds of work, so
 * a daemon reading 10,000 rows still answers its clients in between.
 */
const ROWS_PER_PAUSE = 500;

/** Parses `mcp.json` text into valid rows, the pool section and every problem found. */
export function parseMcpJson(text: string, options: McpJsonOptions = {}): McpJson {
  const steps = parseSteps(text, options);
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}

/**
 * parseMcpJson awaiting `pause()` every few hundred rows, for a caller that must stay
 * responsive while a large file is read (the daemon passes a turn of its event loop).
 */
export async function parseMcpJsonInTurns(
  text: string,
  pause: () => Promise<void>,
  options: McpJsonOptions = {},
): Promise<McpJson> {
  const steps = parseSteps(text, options);
  let step = steps.next();
  while (!step.done) {
    await pause();
    step = steps.next();
  }
  return step.value;
}

/** parseMcpJson's work, yielding (nothing) every ROWS_PER_PAUSE rows. */
function* parseSteps(written: string, options: McpJsonOptions): Generator<void, McpJson> {
  // What some Windows editors put first; not part of the JSON, and not a column either.
  const text = withoutBom(written);
  const env = options.env ?? defaultEnvironment();
  const locator = new Locator(text);
  const { root, strict } = parseRoot(text, locator);
  if (!isObject(root)) {
    const where = locator.position(locator.tree().offset);
    throw new ConfigSyntaxError("the file must hold a JSON object", where.line, where.column);
  }
  // JSON.parse keeps the last of a key written twice; say so, or an edit seems ignored.
  const repeated = !strict || mayRepeatKeys(text, root) ? duplicateKeys(text) : [];
  const warnings: ConfigProblem[] = repeated.map((d) => ({
    message: `${d.path.length > 0 ? `\`${d.path.join(".")}\` has` : "the file has"} the key \`${d.key}\` twice (first at line ${d.first.line}); the last one counts`,
    ...(d.path[0] === "mcpServers" || d.path[0] === "servers"
      ? d.path.length > 1
        ? { id: d.path[1]! }
        : { id: d.key }
      : {}),
    line: d.line,
    column: d.column,
  }));

  const pool = isObject(root.mcpool) ? root.mcpool : {};
  const problems: ConfigProblem[] = [];
  // The section is judged here, so `validate` and the daemon's status say what is wrong;
  // the daemon leaves a bad value out of the pool's options.
  for (const { key, message } of poolSectionProblems(pool)) {
    problems.push({ message, ...locator.keyPosition(["mcpool"], key) });
  }
  let rows: McpServerConfig[] = [];
  // `where` is asked only for a row with something to say: most rows never need a position.
  const positions = new Map<string, () => Position>();
  const add = (id: string, body: unknown, where: () => Position): void => {
    const normalized = normalizeBody(id, body);
    const found =
      "problem" in normalized
        ? [normalized.problem]
        : [...bodyTypos(body), ...validateServerConfig(normalized.row)];
    if (found.length > 0 || "problem" in normalized) {
      for (const message of found)
        problems.push({ message: `\`${id}\`: ${message}`, id, ...where() });
      return;
    }
    rows.push(normalized.row);
    positions.set(id, where);
    for (const name of unsetVariables(normalized.row, env)) {
      warnings.push({
        message: `\`${id}\`: \${${name}} is not set and has no default; it is passed on as written`,
        id,
        ...where(),
      });
    }
  };
  function* addAll(
    map: Body,
    path: string[],
    skip: (id: string) => boolean = () => false,
  ): Generator<void> {
    let count = 0;
    for (const [id, body] of Object.entries(map)) {
      if (skip(id)) continue;
      add(id, body, () => locator.keyPosition(path, id));
      if (++count % ROWS_PER_PAUSE === 0) yield;
    }
  }

  if (isObject(root.mcpServers)) {
    yield* addAll(root.mcpServers, ["mcpServers"]);
  } else if (isObject(root.servers)) {
    yield* addAll(root.servers, ["servers"]);
  } else if (looksLikeBody(root)) {
    if (typeof root.name !== "string" || root.name === "") {
      problems.push({
        message: "a single server body needs a `name` to become its id",
        line: 1,
        column: 1,
      });
    } else {
      const { name, ...body } = root;
      add(name, body, () => locator.position(locator.tree().offset));
    }
  } else {
    // A bare map: a key a typo from `mcpServers` whose value is no server body is a
    // misspelt section, not a server (a server named `server` stays one).
    const misspelt = (id: string): string | undefined => {
      const value = root[id];
      return isObject(value) && looksLikeBody(value) ? undefined : closestKey(id, TOP_LEVEL_KEYS);
    };
    for (const id of Object.keys(root)) {
      const near = misspelt(id);
      if (near !== undefined)
        problems.push({ message: typoMessage(id, near), ...locator.keyPosition([], id) });
    }
    yield* addAll(root, [], (id) => TOP_LEVEL_KEYS.includes(id) || misspelt(id) !== undefined);
  }
  const losers = slugLosers(rows, new Set(options.serving));
  if (losers.length > 0) {
    const lost = new Set(losers.map((loser) => loser.id));
    for (const loser of losers) {
      const where = positions.get(loser.id);
      problems.push({
        message: `\`${loser.id}\`: ${slugLoserProblem(loser)}`,
        id: loser.id,
        ...(where ? where() : {}),
      });
    }
    rows = rows.filter((row) => !lost.has(row.id));
  }
  return { rows, pool, problems, warnings };
}

/**
 * The rows of an `mcp.json` paste, any of the accepted shapes. Throws ConfigSyntaxError
 * when the text does not parse; rows with problems are left out (see parseMcpJson for them).
 * Placeholders stay as written (`env` only informs parseMcpJson's warnings).
 */
export function fromMcpServersJson(text: string, options: McpJsonOptions = {}): McpServerConfig[] {
  return parseMcpJson(text, options).rows;
}

/** A body's keys that look like typos of known ones (`evn`, `callTimeoutMS`). */
function bodyTypos(body: unknown): string[] {
  if (!isObject(body)) return [];
  const known = [...BODY_KEYS, ...PASSTHROUGH];
  const problems: string[] = [];
  for (const key of Object.keys(body)) {
    const near = closestKey(key, known);
    if (near !== undefined) problems.push(typoMessage(key, near));
  }
  return problems;
}

function looksLikeBody(value: Body): boolean {
  return ["command", "url", "httpUrl", "type", "transport"].some(
    (key) => key in value && !isObject(value[key]),
  );
}

/** One body as a host writes it → one row, or why it cannot be one. */
export function normalizeBody(
  id: string,
  body: unknown,
): { row: McpServerConfig } | { problem: string } {
  if (!isObject(body)) return { problem: "a server must be a JSON object" };
  const declared = body.type ?? body.transport;
  if (declared !== undefined && typeof declared !== "string") {
    return { problem: '`type` must be a string such as "stdio" or "http"' };
  }
  const url = body.url ?? body.httpUrl;
  if (declared === "sse") {
    return {
      problem:
        'SSE servers are not supported: mcpool speaks Streamable HTTP. Most servers serve it at the same host, often under /mcp; set "type": "http" and that url',
    };
  }
  const transport =
    declared === undefined
      ? url !== undefined
        ? "http"
        : "stdio"
      : HTTP_TYPES.has(declared)
        ? "http"
        : declared;
  const options: Body = {};
  for (const key of PASSTHROUGH) if (body[key] !== undefined) options[key] = body[key];
  if (body.disabled === true) options.enabled = false;
  if (options.label === undefined) options.label = id;
  if (transport === "http") {
    const row: Body = { id, transport: "http", url, ...options };
    if (body.headers !== undefined) row.headers = body.headers;
    if (body.auth !== undefined) row.auth = body.auth;
    return { row: row as unknown as McpServerConfig };
  }
  if (transport === "stdio") {
    const row: Body = { id, transport: "stdio", command: body.command, ...options };
    if (body.args !== undefined) row.args = body.args;
    if (body.env !== undefined) row.env = body.env;
    if (body.cwd !== undefined) row.cwd = body.cwd;
    if (url !== undefined) row.url = url;
    // Kept so validation says a stdio row carries no `auth`, as it does for `url`.
    if (body.auth !== undefined) row.auth = body.auth;
    return { row: row as unknown as McpServerConfig };
  }
  return { problem: `unknown transport "${transport}"; use "stdio" or "http"` };
}

function nodeValue(node: Node): unknown {
  switch (node.type) {
    case "object": {
      const out: Body = {};
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (key && value) out[String(key.value)] = nodeValue(value);
      }
      return out;
    }
    case "array":
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value;
  }
}

/**
 * The file's value. Strict JSON — what generators and most hosts write — goes through the
 * native parser, many times faster on a large file than building a syntax tree; JSONC
 * (comments, trailing commas) and every syntax error go through jsonc-parser, which says
 * where the error is.
 */
function parseRoot(text: string, locator: Locator): { root: unknown; strict: boolean } {
  try {
    return { root: JSON.parse(text) as unknown, strict: true };
  } catch {
    // Not strict JSON: JSONC, or an error to be placed.
  }
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || !tree) {
    const first = errors[0];
    const where = locator.position(first?.offset ?? 0);
    const code = first ? printParseErrorCode(first.error) : undefined;
    throw new ConfigSyntaxError(
      code === undefined ? "the file is empty" : (SYNTAX_REASONS[code] ?? code),
      where.line,
      where.column,
    );
  }
  locator.adopt(tree);
  return { root: nodeValue(tree), strict: false };
}

interface Position {
  line: number;
  column: number;
}

/**
 * Positions in the text, worked out on the first question: the syntax tree and the line
 * starts are built once, and each object's keys are indexed in one pass over its
 * properties (a findNodeAtLocation per row walks the siblings: quadratic in rows).
 */
class Locator {
  readonly #text: string;
  #tree: Node | undefined;
  #line: ((offset: number) => Position) | undefined;
  readonly #keys = new Map<string, { node: Node | undefined; offsets: Map<string, number> }>();

  constructor(text: string) {
    this.#text = text;
  }

  adopt(tree: Node): void {
    this.#tree = tree;
  }

  /** The tree of a text that parsed (parseRoot has made sure of that). */
  tree(): Node {
    this.#tree ??= parseTree(this.#text, [], {
      allowTrailingComma: true,
      disallowComments: false,
    })!;
    return this.#tree;
  }

  position(offset: number): Position {
    this.#line ??= positionOf(this.#text);
    return this.#line(offset);
  }

  /** Where key `id` of the object at `path` starts ([] is the root). */
  keyPosition(path: string[], id: string): Position {
    const name = path.join("\0");
    let keys = this.#keys.get(name);
    if (!keys) {
      const node = path.length === 0 ? this.tree() : findNodeAtLocation(this.tree(), path);
      keys = { node, offsets: propertyOffsets(node) };
      this.#keys.set(name, keys);
    }
    return this.position(keys.offsets.get(id) ?? keys.node?.offset ?? 0);
  }
}

/** Where each key of an object node starts (its first occurrence, as findNodeAtLocation found it). */
function propertyOffsets(node: Node | undefined): Map<string, number> {
  const offsets = new Map<string, number>();
  for (const property of node?.children ?? []) {
    const key = property.children?.[0];
    if (key && !offsets.has(String(key.value))) offsets.set(String(key.value), property.offset);
  }
  return offsets;
}
