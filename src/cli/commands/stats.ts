/**
 * `mcpool stats [--since 7d] [--server ID] [--unused]` and `mcpool hide|unhide ID TOOL…`:
 * which tools agents call, and what the ones they never call cost on
 * every turn (the catalog's token estimate per definition); hiding writes the row's
 * `hiddenTools` into the daemon's mcp.json, comments kept, and reloads.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import type { PoolClient, ServerState, ToolUsage } from "mcpool-client";
import { McpPoolError } from "mcpool-client";
import { setHiddenToolsInMcpJson } from "../../config/mcp-json-hidden.js";
import { writeAtomically } from "../../daemon/config/source.js";
import { ms } from "../output/figures.js";
import { duration, table } from "../output/format.js";
import { UsageError } from "../output/usage-error.js";
import type { CommandContext } from "./context.js";

export interface StatsOptions {
  since?: string;
  server?: string;
  unused: boolean;
  json: boolean;
  out(line: string): void;
}

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `7d`, `12h`, `30m`, `2w` → ms; undefined for anything else. */
export function windowMs(text: string): number | undefined {
  const match = /^(\d+)([mhdw])$/.exec(text.trim());
  return match ? Number(match[1]) * UNIT_MS[match[2]!]! : undefined;
}

/** A tool the daemon offers, with what its definition costs per turn. */
interface OfferedTool {
  serverId: string;
  tool: string;
  qualified: string;
  tokens: number;
}

function offered(states: readonly ServerState[], server: string | undefined): OfferedTool[] {
  return states
    .filter((s) => server === undefined || s.id === server)
    .flatMap((s) =>
      s.tools
        .filter((t) => !t.hidden && !t.clashed)
        .map((t) => ({
          serverId: s.id,
          tool: t.name,
          qualified: t.qualified,
          tokens: t.tokens ?? 0,
        })),
    );
}

/** Resolves with the exit code; throws a UsageError-like Error for a bad `--since`. */
export async function stats(client: PoolClient, options: StatsOptions): Promise<number> {
  let since: number | undefined;
  if (options.since !== undefined) {
    const span = windowMs(options.since);
    if (span === undefined) {
      throw new McpPoolError(
        "invalid-arguments",
        `--since takes a span like 7d, 24h or 30m, not "${options.since}"`,
      );
    }
    since = Date.now() - span;
  }
  const servers = options.server !== undefined ? [options.server] : undefined;
  // Usage first: it waits for the first reconcile, so the state read next lists every tool.
  const report = await client.usage({
    ...(since !== undefined ? { since } : {}),
    ...(servers ? { servers } : {}),
  });
  const states = await client.state();
  if (options.server !== undefined && !states.some((s) => s.id === options.server)) {
    throw new McpPoolError("unknown-server", `unknown server "${options.server}"`);
  }
  const tools = offered(states, options.server);
  const key = (serverId: string, tool: string): string => `${serverId}\n${tool}`;
  const costs = new Map(tools.map((t) => [key(t.serverId, t.tool), t]));
  const window =
    since !== undefined ? `since ${new Date(since).toISOString().slice(0, 10)}` : "ever";
  if (options.unused) {
    const called = new Set(report.tools.map((u) => key(u.serverId, u.tool)));
    const unused = tools.filter((t) => !called.has(key(t.serverId, t.tool)));
    const total = unused.reduce((sum, t) => sum + t.tokens, 0);
    if (options.json) {
      options.out(
        JSON.stringify(
          { ...(since !== undefined ? { since } : {}), tools: unused, tokens: total },
          null,
          2,
        ),
      );
      return 0;
    }
    if (unused.length === 0) {
      options.out(`every offered tool was called (${window})`);
      return 0;
    }
    options.out(
      table(
        ["TOOL", "SERVER", "TOKENS"],
        unused.map((t) => [t.qualified, t.serverId, `~${t.tokens}`]),
      ),
    );
    options.out("");
    options.out(
      `${unused.length} tool(s) not called ${window} cost ~${total} tokens per turn; \`mcpool hide SERVER TOOL…\` stops offering them`,
    );
    return 0;
  }
  const rows = report.tools.map((u: ToolUsage) => {
    const tool = costs.get(key(u.serverId, u.tool));
    return { ...u, ...(tool ? { qualified: tool.qualified, tokens: tool.tokens } : {}) };
  });
  if (options.json) {
    options.out(
      JSON.stringify({ ...(since !== undefined ? { since } : {}), tools: rows }, null, 2),
    );
    return 0;
  }
  if (rows.length === 0) {
    options.out(`no calls recorded (${window})`);
    return 0;
  }
  const now = Date.now();
  options.out(
    table(
      ["TOOL", "SERVER", "CALLS", "ERRORS", "MEAN", "TOKENS", "LAST CALLED"],
      rows.map((r) => [
        r.qualified ?? r.tool,
        r.serverId,
        String(r.calls),
        String(r.errors),
        ms(r.meanMs),
        r.tokens !== undefined ? `~${r.tokens}` : "-",
        `${duration(now - r.lastCalledAt)} ago`,
      ]),
    ),
  );
  return 0;
}

export interface HideOptions {
  hide: boolean;
  json: boolean;
  out(line: string): void;
}

/** `hide`/`unhide`: edits the row's `hiddenTools` in the daemon's mcp.json and reloads. */
export async function hideTools(
  client: PoolClient,
  id: string,
  names: readonly string[],
  options: HideOptions,
): Promise<number> {
  const state = (await client.state()).find((s) => s.id === id);
  if (!state) throw new McpPoolError("unknown-server", `unknown server "${id}"`);
  // A qualified name is taken too: it is what `mcpool tools` and `stats` print.
  const tools = names.map((name) => state.tools.find((t) => t.qualified === name)?.name ?? name);
  const unknown = tools.filter((name) => !state.tools.some((t) => t.name === name));
  if (options.hide && unknown.length > 0 && state.tools.length > 0) {
    throw new McpPoolError(
      "invalid-arguments",
      `${id} has no tool ${unknown.map((n) => `"${n}"`).join(", ")}; its tools are ${state.tools.map((t) => t.name).join(", ")}`,
    );
  }
  const { configPath } = await client.status();
  // Through a symlink (a dotfiles checkout), so the link stays a link.
  const file = await realpath(configPath);
  const text = await readFile(file, "utf8");
  const next = setHiddenToolsInMcpJson(text, id, tools, options.hide);
  const written = next !== text;
  if (written) await writeAtomically(file, next, (await stat(file)).mode & 0o777);
  const config = await client.reload();
  if (!config.ok) throw new Error(`${config.path}: ${config.error ?? "does not load"}`);
  const verb = options.hide ? "hidden" : "offered again";
  options.out(
    options.json
      ? JSON.stringify(
          { serverId: id, tools, hidden: options.hide, written, configPath: file },
          null,
          2,
        )
      : written
        ? `${id}: ${tools.join(", ")} ${verb} (written to ${file})`
        : `${id}: ${tools.join(", ")} already ${verb}; nothing to write`,
  );
  return 0;
}

/** `mcpool stats [--since 7d] [--server ID] [--unused]`. */
export function statsCommand(
  context: CommandContext<{ since?: string; server?: string; unused?: boolean }>,
): Promise<number> {
  const { since, server, unused } = context.flags;
  return context.withClient((client) =>
    stats(client, {
      ...(since !== undefined ? { since } : {}),
      ...(server !== undefined ? { server } : {}),
      unused: unused === true,
      json: context.json,
      out: context.out,
    }),
  );
}

/** `mcpool hide ID TOOL…` and `mcpool unhide ID TOOL…`. */
export async function hideCommand(context: CommandContext): Promise<number> {
  const id = context.arg(0, "server ID");
  const tools = context.args.slice(1);
  if (tools.length === 0) throw new UsageError(`${context.name} needs at least one TOOL`);
  const { json, out } = context;
  return context.withClient((client) =>
    hideTools(client, id, tools, { hide: context.name === "hide", json, out }),
  );
}
