/**
 * A host's file holding one stdio server, in that host's own format, and the command line a
 * (wired) entry of it runs, as the host would run it.
 */
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import type { HostName } from "../../src/cli/hosts/configs.js";

/** A stdio server as a host lists it: a command, its args, its environment. */
export interface Stdio {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** `name`'s entry in `host`'s own file format, alone in that file. */
export function hostFileText(host: HostName, name: string, server: Stdio): string {
  const { command, args, env } = server;
  switch (host) {
    case "codex":
      return [
        `[mcp_servers.${name}]`,
        `command = ${JSON.stringify(command)}`,
        `args = ${JSON.stringify(args)}`,
        `env = { ${Object.entries(env)
          .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
          .join(", ")} }`,
        "",
      ].join("\n");
    case "goose":
      return [
        "extensions:",
        `  ${name}:`,
        `    cmd: ${JSON.stringify(command)}`,
        `    args: ${JSON.stringify(args)}`,
        `    envs: ${JSON.stringify(env)}`,
        "    enabled: true",
        `    name: ${name}`,
        "    timeout: 300",
        "    type: stdio",
        "",
      ].join("\n");
    case "continue":
      return [
        "mcpServers:",
        `  - name: ${name}`,
        `    command: ${JSON.stringify(command)}`,
        `    args: ${JSON.stringify(args)}`,
        `    env: ${JSON.stringify(env)}`,
        "",
      ].join("\n");
    case "opencode":
    case "kilo":
      return JSON.stringify(
        { mcp: { [name]: { type: "local", command: [command, ...args], environment: env } } },
        null,
        2,
      );
    case "zed":
      return JSON.stringify({ context_servers: { [name]: { command, args, env } } }, null, 2);
    case "vscode":
      return JSON.stringify(
        { servers: { [name]: { type: "stdio", command, args, env } } },
        null,
        2,
      );
    default:
      return JSON.stringify({ mcpServers: { [name]: { command, args, env } } }, null, 2);
  }
}

/** The command line of `name`'s entry in a host's (wired) file, as the host would run it. */
export function entryCommand(host: HostName, text: string, name: string): string[] {
  if (host === "codex") {
    const entry = (parseToml(text).mcp_servers as unknown as Record<string, Stdio>)[name]!;
    return [entry.command, ...entry.args];
  }
  if (host === "goose") {
    const root = parseYaml(text) as { extensions: Record<string, { cmd: string; args: string[] }> };
    const entry = root.extensions[name]!;
    return [entry.cmd, ...entry.args];
  }
  if (host === "continue") {
    const root = parseYaml(text) as { mcpServers: (Stdio & { name: string })[] };
    const entry = root.mcpServers.find((e) => e.name === name)!;
    return [entry.command, ...entry.args];
  }
  const root = parseJsonc(text) as Record<string, Record<string, Record<string, unknown>>>;
  const key =
    host === "opencode" || host === "kilo"
      ? "mcp"
      : host === "zed"
        ? "context_servers"
        : host === "vscode"
          ? "servers"
          : "mcpServers";
  const entry = root[key]![name]!;
  if (host === "opencode" || host === "kilo") return entry.command as string[];
  return [entry.command as string, ...(entry.args as string[])];
}
