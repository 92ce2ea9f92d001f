/**
 * Where MCP hosts keep their server lists (SPEC D8, issue 18), for `mcpool import` and
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
] as const;
export type HostName = (typeof HOSTS)[number];

export function isHostName(value: string): value is HostName {
  return (HOSTS as readonly string[]).includes(value);
}

/** How a host's file is written: JSON (with comments where the host allows), TOML or YAML. */
export type HostFormat = "json" | "toml" | "yaml";

export function hostFormat(host: HostName): HostFormat {
  return host === "codex" ? "toml" : host === "goose" ? "yaml" : "json";
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
  }
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
  if (host === "opencode" && isObject(map) && isObject(map.servers) && !("type" in map.servers)) {
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
