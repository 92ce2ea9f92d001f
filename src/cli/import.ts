/**
 * `mcpool import [--from HOST[,HOST…]] [--write]` (SPEC D8): the MCP servers of the hosts a
 * user already has — Claude Desktop, Claude Code, Cursor, VS Code — merged into mcpool's
 * `mcp.json`. A dry run by default: the unified diff of what would change. `--write` keeps
 * the old file as `mcp.json.bak-<timestamp>` and replaces it atomically; the daemon sees the
 * save and reconciles.
 *
 * Where each host keeps its list is `host-configs.ts` (shared with `mcpool wire`), plus the
 * project files of the directory this runs in and VS Code's `settings.json` `"mcp"`
 * section. Every entry is read with the same normalization as `mcp.json` itself; what is
 * written is mcpool's own spelling of it, placeholders kept exactly as the host had them.
 * The same id with the same connection (SPEC A5) from several places is merged silently;
 * the same id with another connection — between two hosts, or against a server mcpool
 * already has — is reported and not imported: a clash is never resolved by guessing. New
 * entries are inserted into the text jsonc-parser located, in the file's own indentation:
 * the user's comments and formatting stay as they were.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import {
  findNodeAtLocation,
  getNodeValue,
  parseTree,
  printParseErrorCode,
  type Node,
  type ParseError,
} from "jsonc-parser";
import { normalizeBody } from "../config/mcp-json.js";
import { labelOf, type McpServerConfig } from "../config/rows.js";
import { sameConnection } from "../config/same-connection.js";
import { validateServerConfig } from "../config/validate.js";
import {
  HOSTS,
  hostConfigPath,
  isHostName,
  serverMapPaths,
  type HostEnvironment,
  type HostName,
  type JsonPath,
} from "./host-configs.js";
import { redactJsonSecrets } from "./redact-json.js";
import { unifiedDiff } from "./unified-diff.js";

/** Where the hosts' files are looked for: a home, a platform, an environment, a project. */
export interface ImportWhere extends HostEnvironment {
  /** The project directory whose `.mcp.json`, `.cursor/` and `.vscode/` files count too. */
  cwd: string;
}

/** One host file to read and where in it the server maps are. */
export interface HostSource {
  host: HostName;
  path: string;
  /** The server maps of the parsed file. */
  maps(root: Node): JsonPath[];
}

/** One server as a host has it. */
export interface ImportCandidate {
  host: HostName;
  path: string;
  /** The project of `~/.claude.json` whose map holds it, if it is a project's. */
  project?: string;
  /** The key the host gives it. */
  name: string;
  row: McpServerConfig;
}

export interface ImportPlan {
  target: string;
  /** Files read, with how many servers each held. */
  read: { host: HostName; path: string; servers: number }[];
  /** Files that exist but could not be read or parsed. */
  unreadable: { host: HostName; path: string; error: string }[];
  /** Servers the merge adds, in order. */
  added: { id: string; from: string[]; renamedFrom?: string }[];
  /** Servers found again with the same connection: merged silently. */
  duplicates: { id: string; from: string[] }[];
  /** Same id, another connection: not imported. One sentence each. */
  clashes: string[];
  /** Entries that cannot be rows (sse, a url the policy refuses…), one sentence each. */
  skipped: string[];
  /** What the user should know about an imported server, one sentence each. */
  notes: string[];
  /** The target file's text, undefined when it does not exist yet. */
  before: string | undefined;
  after: string;
  diff: string;
}

/** Thrown for a target that cannot be merged into; the message says why. */
export class ImportError extends Error {
  override readonly name = "ImportError";
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A `key` of an object node, or undefined. */
function property(node: Node | undefined, key: string): Node | undefined {
  return node?.children?.find((p) => p.children?.[0]?.value === key)?.children?.[1];
}

const mapAt =
  (key: string) =>
  (root: Node): JsonPath[] =>
    property(root, key)?.type === "object" ? [[key]] : [];

/**
 * Every file `hosts` keep servers in, in a fixed order: the user's own file, then the
 * project's (`cwd`). Missing files are simply not read.
 */
export function hostSources(hosts: readonly HostName[], where: ImportWhere): HostSource[] {
  const sources: HostSource[] = [];
  for (const host of hosts) {
    const path = hostConfigPath(host, where);
    sources.push({ host, path, maps: (root) => serverMapPaths(host, root) });
    if (host === "claude-code") {
      sources.push({ host, path: join(where.cwd, ".mcp.json"), maps: mapAt("mcpServers") });
    } else if (host === "cursor") {
      const project = join(where.cwd, ".cursor", "mcp.json");
      if (project !== path) sources.push({ host, path: project, maps: mapAt("mcpServers") });
    } else if (host === "vscode") {
      // Before mcp.json existed, VS Code kept servers in settings.json under "mcp": { "servers" }.
      sources.push({
        host,
        path: join(dirname(path), "settings.json"),
        maps: (root) => [
          ...(property(property(root, "mcp"), "servers")?.type === "object"
            ? [["mcp", "servers"]]
            : []),
          ...(property(root, "mcp.servers")?.type === "object" ? [["mcp.servers"]] : []),
        ],
      });
      sources.push({ host, path: join(where.cwd, ".vscode", "mcp.json"), maps: mapAt("servers") });
    }
  }
  return sources;
}

/** An id mcpool accepts made from a host's key: other characters become `-`. */
export function idFor(name: string): string {
  const id = name
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 32);
  return id === "" ? "server" : id;
}

/** The body `mcp.json` gets for a row: mcpool's own spelling, nothing a host added. */
export function bodyOf(row: McpServerConfig): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (row.transport === "stdio") {
    body.command = row.command;
    if (row.args !== undefined && row.args.length > 0) body.args = row.args;
    if (row.env !== undefined && Object.keys(row.env).length > 0) body.env = row.env;
    if (row.cwd !== undefined) body.cwd = row.cwd;
  } else {
    body.type = "http";
    body.url = row.url;
    if (row.headers !== undefined && Object.keys(row.headers).length > 0) {
      body.headers = row.headers;
    }
  }
  if (labelOf(row) !== row.id) body.label = labelOf(row);
  if (row.enabled === false) body.disabled = true;
  return body;
}

function positionOf(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

function parse(text: string): { tree: Node } | { error: string } {
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first)
    return { error: `${printParseErrorCode(first.error)} at ${positionOf(text, first.offset)}` };
  if (tree === undefined) return { error: "empty file" };
  return { tree };
}

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Indentation and line ends as the file already has them, so inserted text looks native. */
interface Style {
  unit: string;
  eol: string;
}

function styleOf(text: string): Style {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
  return {
    unit: indent.startsWith("\t") ? "\t" : indent,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
  };
}

/** The whitespace a line starts with, for the line holding `offset`. */
function indentAt(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/**
 * `text` with `"key": value` added as the last property of the object at `path` (made
 * first if it is missing). Only the new text is formatted — in the file's own indentation —
 * and nothing the user wrote is touched but for the comma the previous property needs.
 * (jsonc-parser's modify() with formatting options also reformats the previous property.)
 */
function insertProperty(
  text: string,
  path: JsonPath,
  key: string,
  value: unknown,
  style: Style,
): string {
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const container = tree && (path.length === 0 ? tree : findNodeAtLocation(tree, path));
  if (container?.type !== "object") {
    if (path.length === 0) throw new ImportError("the file does not hold a JSON object");
    const made = insertProperty(text, path.slice(0, -1), String(path.at(-1)), {}, style);
    return insertProperty(made, path, key, value, style);
  }
  const entry = (indent: string): string =>
    `${JSON.stringify(key)}: ${JSON.stringify(value, null, style.unit).replaceAll("\n", style.eol + indent)}`;
  const last = container.children?.at(-1);
  if (last !== undefined) {
    const indent = indentAt(text, last.offset);
    const at = last.offset + last.length;
    let lineEnd = text.indexOf("\n", at);
    if (lineEnd === -1) lineEnd = text.length;
    if (text[lineEnd - 1] === "\r") lineEnd -= 1;
    // `"x": 1, // why` stays one line: the new entry goes on the next, the comma where it was.
    const tail = /^[ \t]*(,?)[ \t]*(?:\/\/.*)?$/.exec(text.slice(at, lineEnd));
    if (tail !== null) {
      const comma = tail[1] === "," ? "" : ",";
      return `${text.slice(0, at)}${comma}${text.slice(at, lineEnd)}${style.eol}${indent}${entry(indent)}${text.slice(lineEnd)}`;
    }
    // Something else follows on the line (`}`, a block comment): insert right there.
    const comma = /^\s*,/.exec(text.slice(at));
    const after = comma ? at + comma[0].length : at;
    return `${text.slice(0, after)}${comma ? "" : ","}${style.eol}${indent}${entry(indent)}${text.slice(after)}`;
  }
  const outer = indentAt(text, container.offset);
  const inner = outer + style.unit;
  const at = container.offset + 1;
  return `${text.slice(0, at)}${style.eol}${inner}${entry(inner)}${style.eol}${outer}${text.slice(at)}`;
}

/** Where the servers of mcpool's own file are, and the rows already there by key. */
function targetServers(
  text: string,
  target: string,
): { path: JsonPath; existing: Map<string, McpServerConfig | undefined> } {
  const parsed = parse(text);
  if ("error" in parsed) {
    throw new ImportError(`${target} does not parse (${parsed.error}); fix it first`);
  }
  const root = getNodeValue(parsed.tree) as unknown;
  if (!isObject(root)) throw new ImportError(`${target} does not hold a JSON object`);
  let path: JsonPath;
  let map: Record<string, unknown>;
  if (isObject(root.mcpServers)) [path, map] = [["mcpServers"], root.mcpServers];
  else if (isObject(root.servers)) [path, map] = [["servers"], root.servers];
  else if (["command", "url", "httpUrl", "type", "transport"].some((k) => k in root)) {
    throw new ImportError(
      `${target} holds a single bare server; put it under "mcpServers" first, then import`,
    );
  } else if (Object.keys(root).some((k) => !["mcpool", "$schema", "inputs"].includes(k))) {
    [path, map] = [[], root];
  } else [path, map] = [["mcpServers"], {}];
  const existing = new Map<string, McpServerConfig | undefined>();
  for (const [key, body] of Object.entries(map)) {
    if (path.length === 0 && ["mcpool", "$schema", "inputs"].includes(key)) continue;
    const normalized = normalizeBody(key, body);
    existing.set(key, "row" in normalized ? normalized.row : undefined);
  }
  return { path, existing };
}

/** Where a server was found: the host, its file and, in `~/.claude.json`, the project. */
const sourceName = (c: { host: string; path: string; project?: string }): string =>
  `${c.host} (${c.path}${c.project !== undefined ? ` project ${c.project}` : ""})`;

/** Reads the hosts' files and mcpool's, and works out the merge. Writes nothing. */
export async function planImport(options: {
  target: string;
  hosts?: readonly HostName[];
  where: ImportWhere;
}): Promise<ImportPlan> {
  const plan: ImportPlan = {
    target: options.target,
    read: [],
    unreadable: [],
    added: [],
    duplicates: [],
    clashes: [],
    skipped: [],
    notes: [],
    before: undefined,
    after: "",
    diff: "",
  };

  // Every server every host has, in host order.
  const candidates: ImportCandidate[] = [];
  const seenFiles = new Set<string>();
  for (const source of hostSources(options.hosts ?? HOSTS, options.where)) {
    if (seenFiles.has(source.path)) continue;
    seenFiles.add(source.path);
    let text: string | undefined;
    try {
      text = await readIfThere(source.path);
    } catch (error) {
      plan.unreadable.push({ ...source, error: (error as Error).message });
      continue;
    }
    if (text === undefined) continue;
    const parsed = parse(text);
    if ("error" in parsed) {
      plan.unreadable.push({ host: source.host, path: source.path, error: parsed.error });
      continue;
    }
    const root = getNodeValue(parsed.tree) as unknown;
    let count = 0;
    for (const mapPath of source.maps(parsed.tree)) {
      let map: unknown = root;
      for (const key of mapPath) map = isObject(map) ? map[key as string] : undefined;
      if (!isObject(map)) continue;
      // Claude Code keeps a map per project: `projects.<path>.mcpServers`.
      const found = {
        host: source.host,
        path: source.path,
        ...(mapPath.length > 2 ? { project: String(mapPath[1]) } : {}),
      };
      for (const [name, body] of Object.entries(map)) {
        count += 1;
        const id = idFor(name);
        const normalized = normalizeBody(id, body);
        if ("problem" in normalized) {
          plan.skipped.push(`"${name}" from ${sourceName(found)}: ${normalized.problem}`);
          continue;
        }
        const row = { ...normalized.row, label: name } as McpServerConfig;
        const problems = validateServerConfig(row);
        if (problems.length > 0) {
          plan.skipped.push(`"${name}" from ${sourceName(found)}: ${problems.join("; ")}`);
          continue;
        }
        candidates.push({ ...found, name, row });
      }
    }
    plan.read.push({ host: source.host, path: source.path, servers: count });
  }

  plan.before = await readIfThere(options.target);
  const base = plan.before ?? '{\n  "mcpServers": {}\n}\n';
  const { path: serversPath, existing } = targetServers(base, options.target);

  // One decision per id: the first candidate stands for the others when they all agree.
  const byId = new Map<string, ImportCandidate[]>();
  for (const candidate of candidates) {
    const list = byId.get(candidate.row.id) ?? [];
    list.push(candidate);
    byId.set(candidate.row.id, list);
  }
  let text = base;
  const style = styleOf(base);
  for (const [id, list] of byId) {
    const first = list[0]!;
    const from = [...new Set(list.map(sourceName))];
    const differing = list.filter((c) => !sameConnection(c.row, first.row));
    if (differing.length > 0) {
      plan.clashes.push(
        `"${id}": ${sourceName(first)} and ${differing.map(sourceName).join(", ")} configure it differently; not imported — rename one in its host, or add it by hand`,
      );
      continue;
    }
    if (existing.has(id)) {
      const mine = existing.get(id);
      if (mine !== undefined && sameConnection(mine, first.row)) {
        plan.duplicates.push({ id, from });
      } else {
        plan.clashes.push(
          `"${id}" from ${from.join(", ")} differs from the server of that id already in ${options.target}; not imported`,
        );
      }
      continue;
    }
    if (list.length > 1) plan.duplicates.push({ id, from });
    const row = first.name === id ? { ...first.row, label: id } : first.row;
    text = insertProperty(text, serversPath, id, bodyOf(row), style);
    plan.added.push({ id, from, ...(first.name !== id ? { renamedFrom: first.name } : {}) });
    if (first.name !== id) {
      plan.notes.push(
        `"${first.name}" becomes the id "${id}" (ids name tools), labelled "${first.name}"`,
      );
    }
    if (JSON.stringify(bodyOf(row)).includes("${input:")) {
      plan.notes.push(
        `"${id}" uses VS Code's \${input:…}, which only VS Code can prompt for; replace it with \${VAR} or a value`,
      );
    }
  }
  plan.after = plan.added.length > 0 ? text : (plan.before ?? "");
  plan.diff =
    plan.added.length > 0
      ? unifiedDiff(
          redactJsonSecrets(plan.before ?? ""),
          redactJsonSecrets(plan.after),
          options.target,
          `${options.target} (imported)`,
        )
      : "";
  return plan;
}

/** `mcp.json.bak-2026-01-31T12-00-00Z`: sorts by time, and no character a shell or Windows minds. */
export function backupPath(target: string, now: Date): string {
  return `${target}.bak-${now
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-")}`;
}

/** Writes a plan: the old file to its backup first, then the new one over it atomically. */
export async function writeImport(
  plan: ImportPlan,
  now: Date = new Date(),
): Promise<string | undefined> {
  await mkdir(dirname(plan.target), { recursive: true, mode: 0o700 });
  let backup: string | undefined;
  if (plan.before !== undefined) {
    backup = backupPath(plan.target, now);
    await writeFile(backup, plan.before, { mode: 0o600, flag: "wx" });
  }
  const temp = `${plan.target}.${process.pid}.import.tmp`;
  await writeFile(temp, plan.after, { mode: 0o600 });
  await rename(temp, plan.target);
  return backup;
}

export interface ImportOptions {
  /** `--from`: comma-separated host names; absent = every host. */
  from?: string;
  write: boolean;
  json: boolean;
  /** mcpool's mcp.json. */
  target: string;
  /** Where the hosts' files are. Default: this user, this platform, this directory. */
  where?: ImportWhere;
  now?: () => Date;
  out(line: string): void;
  err(line: string): void;
}

const EXIT = { ok: 0, failed: 1, badInput: 2 } as const;

/** The command: prints the plan (and the diff), writes it with `write`. Never exits the process. */
export async function runImport(options: ImportOptions): Promise<number> {
  const { out, err } = options;
  let hosts: HostName[] | undefined;
  if (options.from !== undefined) {
    const names = options.from
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = names.filter((name) => !isHostName(name));
    if (unknown.length > 0 || names.length === 0) {
      err(`mcpool import: unknown host "${unknown.join(", ")}" (one of ${HOSTS.join(", ")})`);
      return EXIT.badInput;
    }
    hosts = names as HostName[];
  }
  const where = options.where ?? {
    home: homedir(),
    platform: process.platform,
    env: process.env,
    cwd: process.cwd(),
  };
  let plan: ImportPlan;
  try {
    plan = await planImport({ target: options.target, where, ...(hosts ? { hosts } : {}) });
  } catch (error) {
    if (error instanceof ImportError) {
      err(`mcpool import: ${error.message}`);
      return EXIT.badInput;
    }
    throw error;
  }
  let backup: string | undefined;
  if (options.write && plan.added.length > 0) {
    backup = await writeImport(plan, (options.now ?? (() => new Date()))());
  }
  if (options.json) {
    const { before: _before, after: _after, ...rest } = plan;
    out(
      JSON.stringify(
        { ...rest, written: options.write && plan.added.length > 0, ...(backup ? { backup } : {}) },
        null,
        2,
      ),
    );
    return EXIT.ok;
  }
  for (const file of plan.read) err(`read ${file.servers} server(s) from ${sourceName(file)}`);
  for (const file of plan.unreadable) err(`could not read ${sourceName(file)}: ${file.error}`);
  if (plan.read.length === 0 && plan.unreadable.length === 0) {
    err(`found no config of ${(hosts ?? HOSTS).join(", ")}`);
  }
  for (const line of plan.skipped) err(`skipped ${line}`);
  for (const line of plan.clashes) err(`clash: ${line}`);
  for (const line of plan.notes) err(`note: ${line}`);
  const already = plan.duplicates.filter((d) => !plan.added.some((a) => a.id === d.id)).length;
  err(
    `${plan.added.length} server(s) to add${already > 0 ? `, ${already} already in mcp.json` : ""}${plan.clashes.length > 0 ? `, ${plan.clashes.length} clash(es) left out` : ""}`,
  );
  if (plan.added.length === 0) return EXIT.ok;
  out(plan.diff.trimEnd());
  if (options.write) {
    err(`wrote ${plan.target}${backup ? ` (the old one is ${backup})` : ""}`);
  } else {
    err("dry run: nothing was written; run again with --write to apply (a backup is kept)");
  }
  return EXIT.ok;
}
