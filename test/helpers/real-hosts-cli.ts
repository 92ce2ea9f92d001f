/**
 * The host CLIs of the real-hosts suite: for each, its own file holding the
 * three servers direct (as a user has it before `mcpool wire`), what else it needs to list
 * them in a private HOME (Gemini's and Qwen's trusted folder), and its own `mcp list` read
 * back as one state per server. Codex's `mcp list` prints its config only, so Codex is asked
 * through `codex app-server`'s JSON-RPC `mcpServerStatus/list`, which connects to each.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { HostName } from "../../src/cli/hosts/configs.js";
import { binIn, killGroup, SERVER_IDS, type RealWorld, type Stdio } from "./real-hosts.js";

/** One pooled server as the host's list shows it. */
export interface Listed {
  connected: boolean;
  /** What the host printed for it (its line and any lines under it, colours stripped). */
  text: string;
}

export interface RealHost {
  /** `mcpool wire`'s name for it. */
  wire: HostName;
  /** Its command in the hosts' prefix. */
  bin: string;
  /** Its user file (under HOME), where `configure` writes and `wire` edits. */
  file(world: RealWorld): string;
  /** Writes the host's file with the three servers direct, and what else it needs. */
  configure(world: RealWorld): void;
  /**
   * The host's list shows a server's state only, never the error its `initialize` got:
   * Gemini CLI 0.61 and Qwen Code 0.24 print `- Disconnected` (with `--debug` too), so
   * mcpool's message reaches their users only where the host shows server errors elsewhere.
   */
  hidesServerErrors?: true;
  /** The host's own view of each pooled server. */
  list(prefix: string, world: RealWorld): Promise<Record<string, Listed>>;
}

/**
 * Bound on one host command: `mcp list` connects to every server (each host waits up to
 * 10–30 s for a server to start); a host's first run on a loaded machine unpacks caches.
 */
export const HOST_MS = 90_000;

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/**
 * Runs `bin args` as the user's host, in the project, to its end: stdout and stderr together.
 * `env` is added to the user's login environment (a host's model API, say).
 */
export function runHost(
  bin: string,
  args: string[],
  world: RealWorld,
  input?: (write: (line: string) => void, output: () => string, end: () => void) => void,
  env: Record<string, string> = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: world.project,
      env: { ...world.login, ...env },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => killGroup(child), HOST_MS);
    child.once("error", reject);
    // What the host left behind (an entry it did not reap) goes with it, and so lets go of
    // the host's output; read on `close`, once all of it is in.
    child.once("exit", () => killGroup(child));
    child.once("close", (_code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL") reject(new Error(`${bin} ${args.join(" ")} timed out:\n${output}`));
      else resolve(output.replace(ANSI, ""));
    });
    input?.(
      (line) => child.stdin!.write(`${line}\n`),
      () => output,
      () => child.stdin!.end(),
    );
  });
}

/**
 * Each server's part of a list: from the line that names it (`name:`, `✓ name`, …) to the
 * next server's line, so an error printed under a server's line is part of its text.
 */
function sections(output: string, connected: (text: string) => boolean): Record<string, Listed> {
  const lines = output.split("\n");
  const starts = SERVER_IDS.map((id) => ({
    id,
    at: lines.findIndex((l) => new RegExp(`^[\\s│●✓✗✔✘×*-]*${id}(:|\\s|$)`).test(l)),
  }))
    .filter((s) => s.at >= 0)
    .sort((a, b) => a.at - b.at);
  const out: Record<string, Listed> = {};
  starts.forEach((s, i) => {
    const text = lines
      .slice(s.at, starts[i + 1]?.at ?? lines.length)
      .join("\n")
      .trim();
    out[s.id] = { connected: connected(text), text };
  });
  // A server the list does not name is not connected; the whole list says why.
  for (const id of SERVER_IDS) out[id] ??= { connected: false, text: `not listed in:\n${output}` };
  return out;
}

const writeFile = (path: string, text: string): void => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};

/**
 * How long each host gives a server to start and answer, set as a user on a slow machine
 * sets it: the hosts' own defaults for `mcp list` (Gemini, Qwen and OpenCode 5 s, Codex 10 s,
 * Claude Code 30 s) are clocks that a busy machine runs out, direct or pooled, and these tests
 * are about what the entries do, not how busy the machine is. It goes in the host's file
 * direct (Claude Code: its `MCP_TIMEOUT`), and `wire` keeps it in the entries it writes.
 */
export const HOST_CONNECT_MS = 60_000;

/** `{ mcpServers: rows }`, the shape Claude Code, Gemini and Qwen share (`timeout`: theirs). */
const mcpServersJson = (world: RealWorld, timeout?: number): string =>
  JSON.stringify(
    {
      mcpServers: Object.fromEntries(
        Object.entries(world.rows).map(([id, row]) => [id, { ...row, timeout }]),
      ),
    },
    null,
    2,
  );

/** Gemini and Qwen list a project's servers only in a folder the user trusts. */
function trustProject(world: RealWorld, dir: string): void {
  writeFile(
    join(world.home, dir, "trustedFolders.json"),
    JSON.stringify({ [world.project]: "TRUST_FOLDER" }, null, 2),
  );
}

/** Gemini CLI and Qwen Code print `✓ name: <command> (stdio) - Connected`. */
const geminiConnected = (text: string): boolean => /- Connected\s*$/m.test(text.split("\n")[0]!);

const claudeCode: RealHost = {
  wire: "claude-code",
  bin: "claude",
  file: (world) => join(world.home, ".claude.json"),
  configure(world) {
    writeFile(this.file(world), mcpServersJson(world));
  },
  async list(prefix, world) {
    const out = await runHost(binIn(prefix, this.bin), ["mcp", "list"], world, undefined, {
      MCP_TIMEOUT: String(HOST_CONNECT_MS),
    });
    return sections(out, (text) => /- ✔ Connected\s*$/m.test(text.split("\n")[0]!));
  },
};

const gemini: RealHost = {
  wire: "gemini",
  bin: "gemini",
  hidesServerErrors: true,
  file: (world) => join(world.home, ".gemini", "settings.json"),
  configure(world) {
    writeFile(this.file(world), mcpServersJson(world, HOST_CONNECT_MS));
    trustProject(world, ".gemini");
  },
  async list(prefix, world) {
    return sections(
      await runHost(binIn(prefix, this.bin), ["mcp", "list"], world),
      geminiConnected,
    );
  },
};

const qwen: RealHost = {
  wire: "qwen",
  bin: "qwen",
  hidesServerErrors: true,
  file: (world) => join(world.home, ".qwen", "settings.json"),
  configure(world) {
    writeFile(this.file(world), mcpServersJson(world, HOST_CONNECT_MS));
    trustProject(world, ".qwen");
  },
  async list(prefix, world) {
    return sections(
      await runHost(binIn(prefix, this.bin), ["mcp", "list"], world),
      geminiConnected,
    );
  },
};

const opencode: RealHost = {
  wire: "opencode",
  bin: "opencode",
  file: (world) => join(world.home, ".config", "opencode", "opencode.json"),
  configure(world) {
    const local = (row: Stdio) => ({
      type: "local",
      command: [row.command, ...row.args],
      ...(row.env === undefined ? {} : { environment: row.env }),
      timeout: HOST_CONNECT_MS,
    });
    const mcp = Object.fromEntries(Object.entries(world.rows).map(([id, r]) => [id, local(r)]));
    writeFile(
      this.file(world),
      JSON.stringify({ $schema: "https://opencode.ai/config.json", mcp }, null, 2),
    );
  },
  async list(prefix, world) {
    const out = await runHost(binIn(prefix, this.bin), ["mcp", "list"], world);
    // `●  ✓ name connected`, or `●  ✗ name failed` with the error under it.
    return sections(out, (text) => /✓\s+\S+\s+connected/.test(text.split("\n")[0]!));
  },
};

/** TOML's basic string: JSON's escapes are TOML's for what these paths hold. */
const tomlString = (value: string): string => JSON.stringify(value);

/**
 * Bound on Codex's answer to `mcpServerStatus/list`: it starts every server first, giving each
 * `HOST_CONNECT_MS`.
 */
const CODEX_STATUS_MS = HOST_MS;

interface CodexServerStatus {
  name: string;
  serverInfo: { name: string } | null;
  tools: Record<string, unknown> | null;
  toolsError: unknown;
}

const codex: RealHost = {
  wire: "codex",
  bin: "codex",
  file: (world) => join(world.home, ".codex", "config.toml"),
  configure(world) {
    const tables = Object.entries(world.rows).map(([id, row]) =>
      [
        `[mcp_servers.${id}]`,
        `command = ${tomlString(row.command)}`,
        `args = [${row.args.map(tomlString).join(", ")}]`,
        `startup_timeout_sec = ${HOST_CONNECT_MS / 1000}`,
        ...(row.env === undefined
          ? []
          : [
              `env = { ${Object.entries(row.env)
                .map(([k, v]) => `${k} = ${tomlString(v)}`)
                .join(", ")} }`,
            ]),
        "",
      ].join("\n"),
    );
    writeFile(this.file(world), tables.join("\n"));
  },
  async list(prefix, world) {
    const statuses = await codexServerStatus(prefix, world);
    return Object.fromEntries(
      statuses.map((s) => [
        s.name,
        {
          connected:
            s.serverInfo !== null && s.toolsError == null && Object.keys(s.tools ?? {}).length > 0,
          text: JSON.stringify({
            serverInfo: s.serverInfo?.name ?? null,
            toolsError: s.toolsError,
          }),
        },
      ]),
    );
  },
};

/**
 * `codex app-server`'s `mcpServerStatus/list` (the view Codex's UI shows): initialize, then
 * the list, then stdin's end, which ends the app-server.
 */
export async function codexServerStatus(
  prefix: string,
  world: RealWorld,
): Promise<CodexServerStatus[]> {
  let answer: string | undefined;
  const output = await runHost(binIn(prefix, "codex"), ["app-server"], world, (write, out, end) => {
    write(
      JSON.stringify({
        id: 1,
        method: "initialize",
        params: { clientInfo: { name: "mcpool-real-hosts", version: "0" } },
      }),
    );
    write(JSON.stringify({ method: "initialized" }));
    write(JSON.stringify({ id: 2, method: "mcpServerStatus/list", params: {} }));
    const deadline = Date.now() + CODEX_STATUS_MS;
    const look = setInterval(() => {
      answer = out()
        .split("\n")
        .find((l) => l.startsWith('{"id":2,'));
      if (answer !== undefined || Date.now() > deadline) {
        clearInterval(look);
        end();
      }
    }, 50);
  });
  if (answer === undefined) throw new Error(`codex app-server gave no server status:\n${output}`);
  const reply = JSON.parse(answer) as { result?: { data: CodexServerStatus[] }; error?: unknown };
  if (reply.result === undefined) throw new Error(`mcpServerStatus/list failed: ${answer}`);
  return reply.result.data;
}

/** The hosts under test, each with `mcpool wire`'s name. */
export const REAL_HOSTS_CLI: readonly RealHost[] = [claudeCode, gemini, qwen, opencode, codex];
