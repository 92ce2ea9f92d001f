/**
 * Where MCP hosts keep their server lists, for `mcpool import` and
 * `mcpool wire`: one table, so the two commands cannot disagree about a location. The
 * README's host table says the same and cites each host's documentation.
 *
 * | host           | user file (Linux; macOS where it differs)                      | servers at |
 * | -------------- | -------------------------------------------------------------- | ---------- |
 * | claude-desktop | `$XDG_CONFIG_HOME/Claude/claude_desktop_config.json`;          | `mcpServers` |
 * |                | macOS `~/Library/Application Support/Claude/…`                 |            |
 * | claude-code    | `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`)           | `mcpServers`, `projects.*.mcpServers` |
 * | cursor         | `~/.cursor/mcp.json`                                           | `mcpServers` |
 * | vscode         | `$XDG_CONFIG_HOME/Code/User/mcp.json`; macOS `~/Library/Application Support/Code/User/mcp.json` | `servers` |
 * | codex          | `~/.codex/config.toml` (`$CODEX_HOME/config.toml`), TOML       | `[mcp_servers.<name>]` |
 * | gemini         | `~/.gemini/settings.json`                                      | `mcpServers` |
 * | windsurf       | `~/.codeium/windsurf/mcp_config.json`                          | `mcpServers` |
 * | opencode       | `$XDG_CONFIG_HOME/opencode/opencode.json` (or `.jsonc`)        | `mcp` (`mcp.servers` in V2) |
 * | zed            | `$XDG_CONFIG_HOME/zed/settings.json`; macOS `~/.config/zed/…`  | `context_servers` |
 * | cline          | VS Code's `globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json` | `mcpServers` |
 * | goose          | `$XDG_CONFIG_HOME/goose/config.yaml`, YAML                     | `extensions` |
 * | lm-studio      | `~/.lmstudio/mcp.json`                                         | `mcpServers` |
 * | qwen           | `~/.qwen/settings.json` (`$QWEN_HOME/settings.json`)           | `mcpServers` |
 * | copilot        | `~/.copilot/mcp-config.json` (`$COPILOT_HOME/…`)               | `mcpServers` |
 * | kilo           | `$XDG_CONFIG_HOME/kilo/kilo.json` (or `kilo.jsonc`, `config.json`) | `mcp` |
 * | continue       | `~/.continue/config.yaml` (`$CONTINUE_GLOBAL_DIR/…`), YAML      | `mcpServers` (a list) |
 * | cline-cli      | `~/.cline/data/settings/cline_mcp_settings.json`               | `mcpServers` |
 * | augment        | `~/.augment/settings.json`                                     | `mcpServers` |
 *
 * Where the six beyond the first twelve come from (each read in the host's own source or docs):
 * - qwen (Qwen Code, a Gemini CLI fork, `@qwen-code/qwen-code`): `Storage.getGlobalQwenDir()`
 *   is `$QWEN_HOME` else `~/.qwen`; `settings.json` holds Gemini's `mcpServers` (`url` is SSE,
 *   `httpUrl` Streamable HTTP); a project's `.qwen/settings.json` too.
 * - copilot (GitHub Copilot CLI, `@github/copilot`): docs.github.com, "Adding MCP servers for
 *   GitHub Copilot CLI": `~/.copilot/mcp-config.json`, moved by `$COPILOT_HOME`; `mcpServers`
 *   entries with `"type": "local" | "stdio" | "http" | "sse"` and `"tools"`.
 * - kilo (Kilo Code CLI 7, `@kilocode/cli`, an OpenCode fork): kilo.ai/docs/automate/mcp/
 *   using-in-cli: `~/.config/kilo/kilo.json` (`kilo.jsonc`, `config.json`), project
 *   `kilo.json` or `.kilo/kilo.json`; OpenCode's `mcp` shape (`"type": "local"`, a command array).
 * - continue (Continue CLI `cn`, `@continuedev/cli`): `env.continueHome` is
 *   `$CONTINUE_GLOBAL_DIR` else `~/.continue`, and `config.yaml`'s `mcpServers` is a list of
 *   `{ name, command, args, env, cwd }` or `{ name, url, type, requestOptions }` (src/env.ts,
 *   src/services/MCPService.ts).
 * - cline-cli (Cline CLI 3, `cline` → `@cline/shared` storage/paths): `$CLINE_MCP_SETTINGS_PATH`,
 *   else `$CLINE_DATA_DIR/settings/…`, else `($CLINE_DIR or ~/.cline)/data/settings/
 *   cline_mcp_settings.json`; the same entries as Cline's VS Code extension.
 * - augment (Auggie CLI, `@augmentcode/auggie`): `--augment-cache-dir` defaults to
 *   `~/.augment`, whose `settings.json` has a name-keyed `mcpServers` (a `url` with no type is
 *   Streamable HTTP); a project's `.augment/settings.json` too.
 *
 * Windows paths follow each host's documentation too. `$XDG_CONFIG_HOME` defaults to
 * `~/.config`, as Electron's own userData path and the XDG tools do.
 */
import { isAbsolute, join } from "node:path";

export const HOSTS = [
  "claude-desktop",
  "claude-code",
  "cursor",
  "vscode",
  "codex",
  "gemini",
  "windsurf",
  "opencode",
  "zed",
  "cline",
  "goose",
  "lm-studio",
  "qwen",
  "copilot",
  "kilo",
  "continue",
  "cline-cli",
  "augment",
] as const;
export type HostName = (typeof HOSTS)[number];

export function isHostName(value: string): value is HostName {
  return (HOSTS as readonly string[]).includes(value);
}

/** How a host's file is written: JSON (with comments where the host allows), TOML or YAML. */
export type HostFormat = "json" | "toml" | "yaml";

export function hostFormat(host: HostName): HostFormat {
  return host === "codex" ? "toml" : host === "goose" || host === "continue" ? "yaml" : "json";
}

export interface HostEnvironment {
  home: string;
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
}

function configHome(where: HostEnvironment): string {
  const xdg = where.env.XDG_CONFIG_HOME;
  return xdg !== undefined && isAbsolute(xdg) ? xdg : join(where.home, ".config");
}

/** The per-user application directory of an Electron app (`app.getPath("userData")`'s parent). */
function appData(where: HostEnvironment): string {
  if (where.platform === "darwin") return join(where.home, "Library", "Application Support");
  if (where.platform === "win32") {
    return where.env.APPDATA ?? join(where.home, "AppData", "Roaming");
  }
  return configHome(where);
}

/** `$VAR/<file>` when `$VAR` is an absolute directory, else `fallback/<file>`. */
function envDir(where: HostEnvironment, name: string, fallback: string, file: string): string {
  const dir = where.env[name];
  return dir !== undefined && isAbsolute(dir) ? join(dir, file) : join(fallback, file);
}

/**
 * The user files of `host`, the one it reads first at the head: `wire` edits the first that
 * exists, `import` reads them all.
 */
export function hostConfigPaths(host: HostName, where: HostEnvironment): string[] {
  switch (host) {
    case "claude-desktop":
      return [join(appData(where), "Claude", "claude_desktop_config.json")];
    case "claude-code":
      return [envDir(where, "CLAUDE_CONFIG_DIR", where.home, ".claude.json")];
    case "cursor":
      return [join(where.home, ".cursor", "mcp.json")];
    case "vscode":
      return [join(appData(where), "Code", "User", "mcp.json")];
    case "codex":
      return [envDir(where, "CODEX_HOME", join(where.home, ".codex"), "config.toml")];
    case "gemini":
      return [join(where.home, ".gemini", "settings.json")];
    case "windsurf":
      return [join(where.home, ".codeium", "windsurf", "mcp_config.json")];
    case "opencode": {
      const dir = join(configHome(where), "opencode");
      return [join(dir, "opencode.json"), join(dir, "opencode.jsonc")];
    }
    case "zed":
      // Zed keeps ~/.config/zed on macOS too; on Windows it is %APPDATA%\Zed.
      return where.platform === "win32"
        ? [join(appData(where), "Zed", "settings.json")]
        : [join(configHome(where), "zed", "settings.json")];
    case "cline":
      return [
        join(
          appData(where),
          "Code",
          "User",
          "globalStorage",
          "saoudrizwan.claude-dev",
          "settings",
          "cline_mcp_settings.json",
        ),
      ];
    case "goose":
      return where.platform === "win32"
        ? [join(appData(where), "Block", "goose", "config", "config.yaml")]
        : [join(configHome(where), "goose", "config.yaml")];
    case "lm-studio":
      return [join(where.home, ".lmstudio", "mcp.json")];
    case "qwen":
      return [envDir(where, "QWEN_HOME", join(where.home, ".qwen"), "settings.json")];
    case "copilot":
      return [envDir(where, "COPILOT_HOME", join(where.home, ".copilot"), "mcp-config.json")];
    case "kilo": {
      const dir = join(configHome(where), "kilo");
      return [join(dir, "kilo.json"), join(dir, "kilo.jsonc"), join(dir, "config.json")];
    }
    case "continue":
      return [envDir(where, "CONTINUE_GLOBAL_DIR", join(where.home, ".continue"), "config.yaml")];
    case "cline-cli": {
      const file = where.env.CLINE_MCP_SETTINGS_PATH;
      if (file !== undefined && isAbsolute(file)) return [file];
      const root = envDir(where, "CLINE_DIR", join(where.home, ".cline"), "");
      const data = envDir(where, "CLINE_DATA_DIR", join(root, "data"), "");
      return [join(data, "settings", "cline_mcp_settings.json")];
    }
    case "augment":
      return [join(where.home, ".augment", "settings.json")];
  }
}

/** `mcpool wire HOST --help`'s last lines: where this host's file is looked for, in order. */
export function hostFilesHelp(host: HostName, where: HostEnvironment): string {
  const paths = hostConfigPaths(host, where);
  return [
    "",
    `${host} keeps its MCP servers in (wire edits the first that exists):`,
    ...paths.map((path) => `  ${path}`),
  ].join("\n");
}

/** The host's first user file: where `wire` looks when none exists, for its message. */
export function hostConfigPath(host: HostName, where: HostEnvironment): string {
  return hostConfigPaths(host, where)[0]!;
}

/**
 * The files of a project (`cwd`) that count for `host`, each with the server maps it holds
 * when they differ from the host's own (`maps`).
 */
export function projectConfigPaths(
  host: HostName,
  cwd: string,
): { path: string; maps?: (root: unknown) => JsonPath[] }[] {
  const only = (key: string) => (root: unknown) =>
    isObject(root) && isObject(root[key]) ? [[key]] : [];
  switch (host) {
    case "claude-code":
      return [{ path: join(cwd, ".mcp.json"), maps: only("mcpServers") }];
    case "cursor":
      return [{ path: join(cwd, ".cursor", "mcp.json") }];
    case "vscode":
      return [{ path: join(cwd, ".vscode", "mcp.json") }];
    case "codex":
      return [{ path: join(cwd, ".codex", "config.toml") }];
    case "gemini":
      return [{ path: join(cwd, ".gemini", "settings.json") }];
    case "opencode":
      return [{ path: join(cwd, "opencode.json") }, { path: join(cwd, "opencode.jsonc") }];
    case "zed":
      return [{ path: join(cwd, ".zed", "settings.json") }];
    case "qwen":
      return [{ path: join(cwd, ".qwen", "settings.json") }];
    case "kilo":
      return [
        "kilo.json",
        "kilo.jsonc",
        join(".kilo", "kilo.json"),
        join(".kilo", "kilo.jsonc"),
      ].map((file) => ({ path: join(cwd, file) }));
    case "augment":
      return [{ path: join(cwd, ".augment", "settings.json") }];
    default:
      return [];
  }
}

export type JsonPath = (string | number)[];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The key of a host's name-keyed server map. */
export function serversKey(host: HostName): string {
  switch (host) {
    case "vscode":
      return "servers";
    case "codex":
      return "mcp_servers";
    case "opencode":
    case "kilo":
      return "mcp";
    case "zed":
      return "context_servers";
    case "goose":
      return "extensions";
    default:
      return "mcpServers";
  }
}

/**
 * The paths of every server map in a host's parsed file: the top-level one, for Claude Code
 * each project's (its "local" scope), and OpenCode V2's `mcp.servers`.
 */
export function serverMapPaths(host: HostName, root: unknown): JsonPath[] {
  const key = serversKey(host);
  if (!isObject(root)) return [];
  const map = root[key];
  const paths: JsonPath[] = [];
  if (host === "continue") return Array.isArray(map) ? [[key]] : [];
  if (
    (host === "opencode" || host === "kilo") &&
    isObject(map) &&
    isObject(map.servers) &&
    !("type" in map.servers)
  ) {
    // OpenCode V2 moved servers under `mcp.servers`; V1 put them straight under `mcp`.
    paths.push([key, "servers"]);
  } else if (isObject(map)) paths.push([key]);
  if (host === "claude-code" && isObject(root.projects)) {
    for (const [name, body] of Object.entries(root.projects)) {
      if (isObject(body) && isObject(body[key])) paths.push(["projects", name, key]);
    }
  }
  return paths;
}
