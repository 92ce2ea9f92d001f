/**
 * Where MCP hosts keep their server lists (SPEC D8), for `mcpool wire` (and `mcpool import`):
 * one table, so the two commands cannot disagree about a location.
 *
 * | host           | file                                                       | servers at            |
 * | -------------- | ---------------------------------------------------------- | --------------------- |
 * | claude-desktop | Linux `$XDG_CONFIG_HOME/Claude/claude_desktop_config.json` | `mcpServers`          |
 * |                | macOS `~/Library/Application Support/Claude/…`             |                       |
 * |                | Windows `%APPDATA%\Claude\…`                               |                       |
 * | claude-code    | `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`)       | `mcpServers`, and     |
 * |                |                                                            | `projects.*.mcpServers` |
 * | cursor         | `~/.cursor/mcp.json`                                       | `mcpServers`          |
 * | vscode         | the user dir's `mcp.json` (Linux `$XDG_CONFIG_HOME/Code/User`, | `servers`         |
 * |                | macOS `~/Library/Application Support/Code/User`, Windows `%APPDATA%\Code\User`) |  |
 *
 * `$XDG_CONFIG_HOME` defaults to `~/.config`, as Electron's own userData path does.
 */
import { isAbsolute, join } from "node:path";
import type { Node } from "jsonc-parser";

export const HOSTS = ["claude-desktop", "claude-code", "cursor", "vscode"] as const;
export type HostName = (typeof HOSTS)[number];

export function isHostName(value: string): value is HostName {
  return (HOSTS as readonly string[]).includes(value);
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

/** The config file of `host` for the user described by `where`. */
export function hostConfigPath(host: HostName, where: HostEnvironment): string {
  switch (host) {
    case "claude-desktop":
      return join(appData(where), "Claude", "claude_desktop_config.json");
    case "claude-code": {
      const dir = where.env.CLAUDE_CONFIG_DIR;
      return dir !== undefined && isAbsolute(dir)
        ? join(dir, ".claude.json")
        : join(where.home, ".claude.json");
    }
    case "cursor":
      return join(where.home, ".cursor", "mcp.json");
    case "vscode":
      return join(appData(where), "Code", "User", "mcp.json");
  }
}

/** The key of a host's name-keyed server map. */
export function serversKey(host: HostName): "mcpServers" | "servers" {
  return host === "vscode" ? "servers" : "mcpServers";
}

export type JsonPath = (string | number)[];

/**
 * The JSON paths of every server map in a host's parsed file: the top-level one, and for
 * Claude Code each project's (its "local" scope).
 */
export function serverMapPaths(host: HostName, root: Node | undefined): JsonPath[] {
  const key = serversKey(host);
  const paths: JsonPath[] = [];
  if (root?.type !== "object") return paths;
  const property = (node: Node, name: string): Node | undefined =>
    node.children?.find((p) => p.children?.[0]?.value === name)?.children?.[1];
  if (property(root, key)?.type === "object") paths.push([key]);
  if (host === "claude-code") {
    const projects = property(root, "projects");
    for (const project of projects?.type === "object" ? (projects.children ?? []) : []) {
      const name = project.children?.[0]?.value;
      const body = project.children?.[1];
      if (typeof name !== "string" || body?.type !== "object") continue;
      if (property(body, key)?.type === "object") paths.push(["projects", name, key]);
    }
  }
  return paths;
}
