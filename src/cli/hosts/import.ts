/**
 * `mcpool import [--from HOST[,HOST…]] [--write] [--json]`: the MCP
 * servers of the hosts a user already has — the eighteen of `hosts/configs.ts`, from Claude
 * Desktop to Codex, Goose, LM Studio and the CLIs on npm — merged into mcpool's `mcp.json`. A dry
 * run by default: the unified diff of what would change. `--write` keeps the old file as
 * `mcp.json.mcpool-backup-<time>` (backup.ts) and replaces it atomically; the daemon sees the save
 * and reconciles.
 *
 * Where each host keeps its list is `hosts/configs.ts` (shared with `mcpool wire`), plus the
 * project files of the directory this runs in and VS Code's `settings.json` `"mcp"`
 * section. Each entry is first turned from its host's spelling into an `mcp.json` body
 * (`hosts/entries.ts`), then read with the same normalization as `mcp.json` itself; what is
 * written is mcpool's own spelling of it, placeholders kept exactly as the host had them.
 * The same id with the same connection from several places is merged silently;
 * the same id with another connection — between two hosts, or against a server mcpool
 * already has — is reported and not imported: a clash is never resolved by guessing. New
 * entries are inserted into the text jsonc-parser located, in the file's own indentation:
 * the user's comments and formatting stay as they were.
 */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { normalizeBody } from "../../config/mcp-json.js";
import { labelOf, type McpServerConfig } from "../../config/rows.js";
import { sameConnection } from "../../config/same-connection.js";
import { validateServerConfig } from "../../config/validate.js";
import {
  HOSTS,
  hostConfigPaths,
  isHostName,
  projectConfigPaths,
  type HostEnvironment,
  type HostName,
  type JsonPath,
} from "./configs.js";
import { backupPath } from "./backup.js";
import { isBridgeBody, looksLikeSse } from "./entries.js";
import { parseHostText, readHostFile, readIfThere } from "./files.js";
import { ImportError, insertProperty, styleOf } from "./json-insert.js";
import { redactJsonSecrets } from "./redact-json.js";
import { hostBody } from "./shapes.js";
import { unifiedDiff } from "./unified-diff.js";
import { EXIT } from "../output/exit-codes.js";

export { ImportError } from "./json-insert.js";

/** Where the hosts' files are looked for: a home, a platform, an environment, a project. */
export interface ImportWhere extends HostEnvironment {
  /** The project directory whose `.mcp.json`, `.cursor/`, `.codex/`… files count too. */
  cwd: string;
}

/** One host file to read and, when not the host's own, where in it the server maps are. */
export interface HostSource {
  host: HostName;
  path: string;
  maps?: (root: unknown) => JsonPath[];
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

/** One host file as `--json` shows it: what it holds and what cannot be imported. */
export interface ImportedFile {
  host: HostName;
  file: string;
  /** Every entry that can be a row, with the id it gets. */
  servers: { name: string; id: string; project?: string }[];
  /** Entries that cannot be rows (SSE, a url the policy refuses, a host's built-in…). */
  skipped: { name: string; why: string }[];
}

export interface ImportPlan {
  target: string;
  /** Files read, in host order. */
  files: ImportedFile[];
  /** Files that exist but could not be read or parsed. */
  unreadable: { host: HostName; file: string; error: string }[];
  /** Hosts asked for that have no file at all. */
  missing: HostName[];
  /** Servers the merge adds, in order. */
  added: { id: string; from: string[]; renamedFrom?: string }[];
  /** Servers found again with the same connection: merged silently. */
  duplicates: { id: string; from: string[] }[];
  /** Same id, another connection: not imported. One sentence each. */
  clashes: string[];
  /** Entries that cannot be rows, one sentence each (the same as the files' `skipped`). */
  skipped: string[];
  /** What the user should know about an imported server, one sentence each. */
  notes: string[];
  /** The target file's text, undefined when it does not exist yet. */
  before: string | undefined;
  after: string;
  diff: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** VS Code's servers in settings.json, from before mcp.json: `"mcp": { "servers" }`. */
const vscodeSettingsMaps = (root: unknown): JsonPath[] => {
  if (!isObject(root)) return [];
  return [
    ...(isObject(root.mcp) && isObject(root.mcp.servers) ? [["mcp", "servers"]] : []),
    ...(isObject(root["mcp.servers"]) ? [["mcp.servers"]] : []),
  ];
};

/**
 * Every file `hosts` keep servers in, in a fixed order: the user's own files, then the
 * project's (`cwd`). Missing files are simply not read.
 */
export function hostSources(hosts: readonly HostName[], where: ImportWhere): HostSource[] {
  const sources: HostSource[] = [];
  for (const host of hosts) {
    const own = hostConfigPaths(host, where);
    for (const path of own) sources.push({ host, path });
    if (host === "vscode") {
      sources.push({
        host,
        path: join(dirname(own[0]!), "settings.json"),
        maps: vscodeSettingsMaps,
      });
    }
    for (const project of projectConfigPaths(host, where.cwd)) {
      if (!own.includes(project.path)) sources.push({ host, ...project });
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

/** Where the servers of mcpool's own file are, and the rows already there by key. */
function targetServers(
  text: string,
  target: string,
): { path: JsonPath; existing: Map<string, McpServerConfig | undefined> } {
  const parsed = parseHostText("json", text);
  if ("error" in parsed) {
    throw new ImportError(`${target} does not parse (${parsed.error}); fix it first`);
  }
  const root = parsed.value;
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

/** One entry of a host's file as a row, or why it cannot be one. */
function candidateRow(
  host: HostName,
  name: string,
  value: unknown,
): { row: McpServerConfig } | { why: string } {
  const body = hostBody(host, value);
  if ("skip" in body) return { why: String(body.skip) };
  // What `mcpool wire` wrote: importing it would make the pool serve itself.
  if (isBridgeBody(body)) return { why: "it already goes through mcpool (`mcpool wire` wrote it)" };
  const normalized = normalizeBody(idFor(name), body);
  if ("problem" in normalized) return { why: normalized.problem };
  const row = { ...normalized.row, label: name } as McpServerConfig;
  const problems = validateServerConfig(row);
  return problems.length > 0 ? { why: problems.join("; ") } : { row };
}

/** Reads every source once, in order: the files found, and every server they hold. */
async function readSources(
  sources: readonly HostSource[],
  plan: ImportPlan,
): Promise<ImportCandidate[]> {
  const candidates: ImportCandidate[] = [];
  const seenFiles = new Set<string>();
  const seenHosts = new Set<HostName>();
  for (const source of sources) {
    if (seenFiles.has(source.path)) continue;
    seenFiles.add(source.path);
    const read = await readHostFile(source.host, source.path, source.maps);
    if (read === undefined) continue;
    seenHosts.add(source.host);
    if ("error" in read) {
      plan.unreadable.push({ host: source.host, file: source.path, error: read.error });
      continue;
    }
    const file: ImportedFile = { host: source.host, file: source.path, servers: [], skipped: [] };
    for (const entry of read.entries) {
      const found = {
        host: source.host,
        path: source.path,
        ...(entry.project !== undefined ? { project: entry.project } : {}),
      };
      const made = candidateRow(source.host, entry.name, entry.value);
      if ("why" in made) {
        file.skipped.push({ name: entry.name, why: made.why });
        plan.skipped.push(`"${entry.name}" from ${sourceName(found)}: ${made.why}`);
        continue;
      }
      file.servers.push({
        name: entry.name,
        id: made.row.id,
        ...(entry.project !== undefined ? { project: entry.project } : {}),
      });
      candidates.push({ ...found, name: entry.name, row: made.row });
    }
    plan.files.push(file);
  }
  plan.missing = [...new Set(sources.map((s) => s.host))].filter((h) => !seenHosts.has(h));
  return candidates;
}

/** Reads the hosts' files and mcpool's, and works out the merge. Writes nothing. */
export async function planImport(options: {
  target: string;
  hosts?: readonly HostName[];
  where: ImportWhere;
}): Promise<ImportPlan> {
  const plan: ImportPlan = {
    target: options.target,
    files: [],
    unreadable: [],
    missing: [],
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
  const candidates = await readSources(hostSources(options.hosts ?? HOSTS, options.where), plan);

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
    if (row.transport === "http" && looksLikeSse(row.url)) {
      plan.notes.push(
        `"${id}" is imported as a Streamable HTTP server, but its url ends in /sse, where servers usually serve the older SSE transport, which mcpool does not speak; if it fails to connect, point it at the server's Streamable HTTP endpoint (often /mcp)`,
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

/**
 * Which hosts were found, each file with how many servers it holds, which could not be read
 * and why, and which hosts have no config here at all.
 */
function reportFiles(
  plan: ImportPlan,
  hosts: readonly HostName[],
  err: (line: string) => void,
): void {
  for (const file of plan.files) {
    const skipped = file.skipped.length > 0 ? ` (${file.skipped.length} skipped)` : "";
    err(
      `read ${file.servers.length} server(s)${skipped} from ${sourceName({ ...file, path: file.file })}`,
    );
  }
  for (const file of plan.unreadable) {
    err(`could not read ${sourceName({ ...file, path: file.file })}: ${file.error}`);
  }
  if (plan.files.length === 0 && plan.unreadable.length === 0) {
    err(`found no config of ${hosts.join(", ")}`);
  } else if (plan.missing.length > 0) {
    err(`no config of ${plan.missing.join(", ")}`);
  }
}

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
  reportFiles(plan, hosts ?? HOSTS, err);
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
