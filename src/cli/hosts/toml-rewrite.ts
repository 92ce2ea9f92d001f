/**
 * `mcpool wire codex`: Codex's `config.toml` rewritten table by table. Only the
 * `[mcp_servers.<name>]` table being wired changes — its connection keys (and its `.env`,
 * `.http_headers` and `.env_http_headers` sub-tables) give way to the bridge's `command` and
 * `args` — and every other byte of the file stays as it was: no TOML library writes a file
 * back with its comments and layout, so this edits the text and then checks, with smol-toml,
 * that the result means exactly the old file with that one change.
 */
import { parse as parseToml } from "smol-toml";
import { canonicalJson } from "./files.js";

type Table = Record<string, unknown>;

const isObject = (value: unknown): value is Table =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The segments of a dotted TOML key (`mcp_servers."my server".env`), or undefined. */
export function dottedKey(source: string): string[] | undefined {
  const parts: string[] = [];
  let rest = source.trim();
  for (;;) {
    let match: RegExpExecArray | null;
    if ((match = /^[A-Za-z0-9_-]+/.exec(rest))) parts.push(match[0]);
    else if ((match = /^"(?:[^"\\]|\\.)*"/.exec(rest))) parts.push(JSON.parse(match[0]) as string);
    else if ((match = /^'[^']*'/.exec(rest))) parts.push(match[0].slice(1, -1));
    else return undefined;
    rest = rest.slice(match[0].length).trimStart();
    if (rest === "") return parts;
    if (!rest.startsWith(".")) return undefined;
    rest = rest.slice(1).trimStart();
  }
}

/** One statement of the file: a table header, a key = value (all its lines), or other lines. */
interface Statement {
  kind: "header" | "pair" | "other";
  /** The header's table path, or the pair's key. */
  key?: string[];
  text: string;
}

/** How far brackets and multi-line strings stay open after `line`, given the state before it. */
function scanLine(line: string, state: { depth: number; string?: string | undefined }): void {
  for (let i = 0; i < line.length; i++) {
    if (state.string !== undefined) {
      if (state.string === '"' || state.string === '"""') {
        if (line[i] === "\\") {
          i += 1;
          continue;
        }
      }
      if (line.startsWith(state.string, i)) {
        i += state.string.length - 1;
        state.string = undefined;
      } else if (state.string.length === 1 && line[i] === "\n") state.string = undefined;
      continue;
    }
    const c = line[i]!;
    if (c === "#") return;
    if (line.startsWith('"""', i) || line.startsWith("'''", i)) {
      state.string = line.slice(i, i + 3);
      i += 2;
    } else if (c === '"' || c === "'") state.string = c;
    else if (c === "[" || c === "{") state.depth += 1;
    else if (c === "]" || c === "}") state.depth -= 1;
  }
}

/** The file cut into statements, each keeping its exact text. */
function statements(text: string): Statement[] {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const out: Statement[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // `[table]` and `[[array.of.tables]]`: either ends the table before it.
    const header = /^\s*\[\[?\s*([^[\]]+?)\s*\]\]?\s*(#.*)?\r?\n?$/.exec(line);
    if (header) {
      out.push({ kind: "header", key: dottedKey(header[1]!) ?? [], text: line });
      continue;
    }
    const pair = /^\s*([^=#\s][^=#]*?)\s*=/.exec(line);
    if (!pair || line.trimStart().startsWith("[")) {
      out.push({ kind: "other", text: line });
      continue;
    }
    let statement = line;
    const state: { depth: number; string?: string } = { depth: 0 };
    scanLine(line.slice(pair[0].length), state);
    while ((state.depth > 0 || (state.string?.length ?? 0) === 3) && i + 1 < lines.length) {
      i += 1;
      statement += lines[i]!;
      scanLine(lines[i]!, state);
    }
    out.push({ kind: "pair", key: dottedKey(pair[1]!) ?? [pair[1]!], text: statement });
  }
  return out;
}

const sameStart = (key: readonly string[] | undefined, prefix: readonly string[]): boolean =>
  key !== undefined && prefix.every((part, i) => key[i] === part);

/** A TOML basic string: JSON's escapes are all TOML's too. */
const tomlString = (value: string): string => JSON.stringify(value);

/** The file with `value`'s connection keys removed from `mcp_servers[name]`, for the check. */
function without(root: unknown, name: string, keys: ReadonlySet<string>): unknown {
  const copy = structuredClone(root) as Table;
  const entry = isObject(copy.mcp_servers) ? copy.mcp_servers[name] : undefined;
  if (isObject(entry)) for (const key of keys) delete entry[key];
  return copy;
}

/** The `key = …` pair of the table whose header is `parts[at]`, if it has one. */
function oldPair(parts: readonly Statement[], at: number, key: string): string | undefined {
  for (const part of parts.slice(at + 1)) {
    if (part.kind === "header") return undefined;
    if (part.kind === "pair" && part.key?.length === 1 && part.key[0] === key) return part.text;
  }
  return undefined;
}

/**
 * `args` as a TOML array in the style the table's old one had: on one line, or an
 * item a line at the old items' indentation, with a trailing comma if it had one.
 */
function tomlArgs(args: readonly string[], old: string | undefined, eol: string): string {
  const items = args.map(tomlString);
  const body = old?.slice(old.indexOf("[") + 1, old.lastIndexOf("]"));
  if (body === undefined || !body.includes("\n")) return `[${items.join(", ")}]`;
  const indent = /\n([ \t]*)\S/.exec(body)?.[1] ?? "  ";
  const trailing = /,\s*$/.test(body) ? "," : "";
  return `[${eol}${items.map((item) => indent + item).join(`,${eol}`)}${trailing}${eol}]`;
}

/** A value a server's table is given: a string, a list of strings, a table of strings. */
export type TomlValue = string | readonly string[] | Readonly<Record<string, string>>;

const isList = (value: TomlValue): value is readonly string[] => Array.isArray(value);

/**
 * `text` with `[mcp_servers.<name>]` starting `command` with `args` instead of its own
 * connection (`connection`: the keys that make one), or why it cannot be rewritten safely.
 */
export function rewriteCodexServer(
  text: string,
  name: string,
  command: string,
  args: readonly string[],
  connection: ReadonlySet<string>,
  /** More connection keys to write after `args` (`env`, `cwd`): strings or tables of strings. */
  more: Readonly<Record<string, string | Record<string, string>>> = {},
): { text: string } | { why: string } {
  return rewriteCodexTable(text, name, { command, args, ...more }, connection);
}

/**
 * `text` with `[mcp_servers.<name>]`'s connection (`connection`: the keys that make one)
 * replaced by `values`, written in their order at the table's head (a list in the style the
 * table's old one of that key had); or why it cannot be rewritten safely.
 */
export function rewriteCodexTable(
  text: string,
  name: string,
  values: Readonly<Record<string, TomlValue>>,
  connection: ReadonlySet<string>,
): { text: string } | { why: string } {
  const table = ["mcp_servers", name];
  const parts = statements(text);
  const at = parts.findIndex((s) => s.kind === "header" && s.key?.join("\0") === table.join("\0"));
  if (at === -1) {
    return { why: `not written as a [mcp_servers.${name}] table; wire it by hand` };
  }
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const written = Object.entries(values).map(([key, value]) => {
    const shown = isList(value) ? tomlArgs(value, oldPair(parts, at, key), eol) : tomlValue(value);
    return `${dottedPart(key)} = ${shown}${eol}`;
  });
  const kept: string[] = [];
  let inTable = false;
  let dropTable = false;
  for (const [i, part] of parts.entries()) {
    if (part.kind === "header") {
      inTable = i === at;
      // `[mcp_servers.<name>.env]` and the like belong to the connection too.
      const sub = sameStart(part.key, table) && part.key!.length > 2;
      dropTable = sub && connection.has(part.key![2]!);
      if (!dropTable) kept.push(part.text);
      if (inTable) {
        const header = part.text.endsWith("\n") ? part.text : part.text + eol;
        kept[kept.length - 1] = header;
        kept.push(...written);
      }
      continue;
    }
    if (dropTable) continue;
    if (inTable && part.kind === "pair" && connection.has(part.key?.[0] ?? "")) continue;
    kept.push(part.text);
  }
  const next = kept.join("");
  // The check: the new file means the old one, this entry's connection replaced.
  try {
    const before = parseToml(text);
    const after = parseToml(next);
    const entry = isObject(after.mcp_servers) ? after.mcp_servers[name] : undefined;
    const wiredOk =
      isObject(entry) &&
      Object.entries(values).every(
        ([key, value]) => canonicalJson(entry[key]) === canonicalJson(value),
      );
    const restOk =
      JSON.stringify(without(before, name, connection)) ===
      JSON.stringify(without(after, name, connection));
    if (wiredOk && restOk) return { text: next };
  } catch {
    // Fall through: a rewrite that does not parse is not written.
  }
  return { why: `its [mcp_servers.${name}] table could not be rewritten safely; wire it by hand` };
}

/** The pool-wide table `replaceCodexServers` writes: its name, and what it starts. */
export interface CodexTable {
  name: string;
  command: string;
  args: readonly string[];
}

/**
 * `text` with the `[mcp_servers.<name>]` tables of `goes` (their sub-tables too) taken out
 * and, given `table`, that table in the first one's place (at the file's end when none goes);
 * or why not. Comments and blank lines after a table's last key stay; the result must mean
 * the old file with exactly that change.
 */
export function replaceCodexServers(
  text: string,
  goes: readonly string[],
  table: CodexTable | undefined,
): { text: string } | { why: string } {
  const parts = statements(text);
  const inTable = (part: Statement, server: string): boolean =>
    part.kind === "header" && part.key?.[0] === "mcp_servers" && part.key[1] === server;
  for (const server of goes) {
    if (!parts.some((part) => inTable(part, server) && part.key!.length === 2)) {
      return {
        why: `${server} is not written as a [mcp_servers.${server}] table; wire it by hand`,
      };
    }
  }
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const added =
    table === undefined
      ? ""
      : `[mcp_servers.${dottedPart(table.name)}]${eol}command = ${tomlString(table.command)}${eol}args = ${tomlArgs(table.args, undefined, eol)}${eol}`;
  const kept: string[] = [];
  let dropping = false;
  let placed = false;
  /** Lines after a dropped table's last key: kept, unless another of its keys follows. */
  let pending: string[] = [];
  for (const part of parts) {
    if (part.kind === "header") {
      kept.push(...pending);
      pending = [];
      dropping = goes.some((server) => inTable(part, server));
      if (dropping && !placed) {
        kept.push(added);
        placed = true;
      }
      if (!dropping) kept.push(part.text);
      continue;
    }
    if (!dropping) kept.push(part.text);
    else if (part.kind === "other") pending.push(part.text);
    else pending = [];
  }
  kept.push(...pending);
  let next = kept.join("");
  if (!placed && added !== "") {
    const gap = next === "" ? "" : next.endsWith("\n") ? eol : eol + eol;
    next = `${next}${gap}${added}`;
  }
  try {
    const before = parseToml(text);
    const servers = isObject(before.mcp_servers) ? { ...before.mcp_servers } : {};
    for (const server of goes) delete servers[server];
    if (table !== undefined)
      servers[table.name] = { command: table.command, args: [...table.args] };
    const after = parseToml(next);
    // The last server taken out takes its `[mcp_servers]` with it.
    const { mcp_servers: _servers, ...rest } = before;
    const none = Object.keys(servers).length === 0 && !("mcp_servers" in after);
    if (canonicalJson(after) === canonicalJson(none ? rest : { ...before, mcp_servers: servers })) {
      return { text: next };
    }
  } catch {
    // Fall through: a rewrite that does not parse is not written.
  }
  return { why: "its [mcp_servers] tables could not be rewritten safely; wire it by hand" };
}

/** A string, or an inline table of strings (`{ KEY = "value" }`). */
function tomlValue(value: string | Readonly<Record<string, string>>): string {
  if (typeof value === "string") return tomlString(value);
  const pairs = Object.entries(value).map(([k, v]) => `${dottedPart(k)} = ${tomlString(v)}`);
  return pairs.length === 0 ? "{}" : `{ ${pairs.join(", ")} }`;
}

/** A table name's part: bare when TOML allows it, quoted when not. */
const dottedPart = (name: string): string =>
  /^[A-Za-z0-9_-]+$/.test(name) ? name : tomlString(name);
