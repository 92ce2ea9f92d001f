/**
 * Every `mcpool` command, once: its synopsis, what it does, its arguments, its options, an
 * example, and its runner (in its module under commands/, loaded when it runs). main.ts
 * parses argv with the options, looks the command up here and runs it. The global usage (`mcpool
 * --help`), each command's own help (`mcpool call --help`,
 * `mcpool help call`) and the options main.ts parses are all made from this table, so a
 * command or option cannot be known to one and missing from another. The README's CLI table
 * is held to the synopses, and its exit-code table to output/exit-codes.ts, by
 * test/unit/cli-help.test.ts.
 */
import type { Runner } from "./commands/context.js";
import { HOSTS as HOST_NAMES } from "./hosts/configs.js";

export interface CommandHelp {
  name: string;
  /** What follows `mcpool` on the usage line: `call QUALIFIED [JSON | - | @FILE]`. */
  synopsis: string;
  /** One sentence, lower case, no full stop: what it does. */
  summary: string;
  /** `[placeholder, meaning]`, in the synopsis's order. */
  arguments?: readonly (readonly [string, string])[];
  /**
   * `[flag, meaning]`. A flag is `--name`, `--name VALUE`, `-x, --name` or `-x VALUE`: one
   * with a value is a string option, one without a boolean, and that is how it is parsed.
   */
  options?: readonly (readonly [string, string])[];
  /** Whole command lines, each one that runs as written. */
  examples: readonly string[];
  /**
   * Loads the command's runner; `help` has none, main.ts answers it. Any runner fits here;
   * `commandRunner` holds each to the flags as they are parsed.
   */
  run?: () => Promise<Runner<never>>;
}

/** Options every command takes; `--help` and `--version` are answered before any command runs. */
export const GLOBAL_OPTIONS = [
  ["--json", "machine-readable output (every command that prints)"],
  ["--socket PATH", "the daemon's socket (default: $MCPOOL_SOCKET, else the per-user one)"],
  ["--config PATH", "the mcp.json to use (default: $MCPOOL_CONFIG, else the per-user one)"],
  ["-h, --help", "this command's help"],
  ["-v, --version", "the version of mcpool"],
] as const satisfies readonly (readonly [string, string])[];

const SERVER_ID = ["ID", "a server's id: its key in mcp.json"] as const;
const HOSTS = HOST_NAMES.join(", ");

export const COMMANDS = [
  {
    name: "serve",
    run: async () => (await import("./commands/serve.js")).serveCommand,
    synopsis: "serve [--config PATH] [--socket PATH]",
    summary: "run the daemon in the foreground",
    options: [
      [
        "--handover N",
        "(`mcpool restart` gives it) take over from the daemon that started this one: a control channel on fd 3 and N descriptors from fd 4 on",
      ],
      [
        "--keeper",
        "(the launchd agent runs it) start the daemon and follow whichever daemon serves the socket across hand-over restarts; exit as the last one ended",
      ],
    ],
    examples: ["mcpool serve", "mcpool serve --config ./mcp.json --socket /tmp/mcpool.sock"],
  },
  {
    name: "status",
    run: async () => (await import("./commands/status.js")).statusCommand,
    synopsis: "status",
    summary:
      "each server's status, pid, uptime, CPU, memory, calls in the last minute, tools and last error; the config file's state",
    examples: ["mcpool status", "mcpool status --json"],
  },
  {
    name: "top",
    run: async () => (await import("./commands/top.js")).topCommand,
    synopsis: "top [--once]",
    summary: "a live view: CPU, memory, calls and latency per server, and the log",
    options: [["--once", "print one frame and end (no terminal needed)"]],
    examples: ["mcpool top", "mcpool top --once"],
  },
  {
    name: "stats",
    run: async () => (await import("./commands/stats.js")).statsCommand,
    synopsis: "stats [--since 7d] [--server ID] [--unused]",
    summary: "tools by use, or the never-called ones and what they cost per turn",
    options: [
      ["--since DURATION", "the window counted (7d, 24h, 30m; default: everything recorded)"],
      ["--server ID", "one server's tools"],
      ["--unused", "the tools never called in the window, and their tokens"],
    ],
    examples: ["mcpool stats --since 7d", "mcpool stats --unused --server github"],
  },
  {
    name: "hide",
    run: async () => (await import("./commands/stats.js")).hideCommand,
    synopsis: "hide ID TOOL…",
    summary: "stop offering tools (adds them to the server's hiddenTools in mcp.json)",
    arguments: [SERVER_ID, ["TOOL…", "one or more of its tools, by their own names"]],
    examples: ["mcpool hide github create_gist delete_repo"],
  },
  {
    name: "unhide",
    run: async () => (await import("./commands/stats.js")).hideCommand,
    synopsis: "unhide ID TOOL…",
    summary: "offer hidden tools again (removes them from hiddenTools in mcp.json)",
    arguments: [SERVER_ID, ["TOOL…", "one or more of its hidden tools"]],
    examples: ["mcpool unhide github create_gist"],
  },
  {
    name: "tools",
    run: async () => (await import("./commands/tools.js")).toolsCommand,
    synopsis: "tools [--server ID]",
    summary: "the tools agents are offered",
    options: [["--server ID", "one server's tools (an unknown ID is exit 2)"]],
    examples: ["mcpool tools", "mcpool tools --server echo --json"],
  },
  {
    name: "search",
    run: async () => (await import("./commands/tools.js")).searchCommand,
    synopsis: "search QUERY [--server ID] [--limit N]",
    summary: "the tools that best match QUERY, best first",
    arguments: [["QUERY", "words; several arguments are one query"]],
    options: [
      ["--server ID", "search one server's tools"],
      ["--limit N", "at most N tools"],
    ],
    examples: ["mcpool search read a file", "mcpool search issues --server github --limit 5"],
  },
  {
    name: "describe",
    run: async () => (await import("./commands/describe.js")).describeCommand,
    synopsis: "describe QUALIFIED",
    summary: "one tool's title, annotations, input and output schema",
    arguments: [["QUALIFIED", "the tool's qualified name, <server>__<tool> (see `mcpool tools`)"]],
    examples: ["mcpool describe echo__echo"],
  },
  {
    name: "call",
    run: async () => (await import("./commands/call.js")).callCommand,
    synopsis: "call QUALIFIED [JSON | - | @FILE]",
    summary: "call a tool, print its result",
    arguments: [
      ["QUALIFIED", "the tool's qualified name, <server>__<tool>"],
      ["JSON", "its arguments, a JSON object (default: {})"],
      ["-", "read the arguments as JSON from stdin"],
      ["@FILE", "read the arguments as JSON from FILE"],
    ],
    options: [["--json", "print the raw CallToolResult"]],
    examples: [
      `mcpool call echo__echo '{"text":"hello"}'`,
      `echo '{"text":"hello"}' | mcpool call echo__echo -`,
      "mcpool call echo__echo @args.json",
    ],
  },
  {
    name: "probe",
    run: async () => (await import("./commands/servers.js")).probeCommand,
    synopsis: "probe ID",
    summary: "dial a configured server afresh and list its tools (exit 1 when it fails)",
    arguments: [SERVER_ID],
    examples: ["mcpool probe echo"],
  },
  {
    name: "stop",
    run: async () => (await import("./commands/servers.js")).stopCommand,
    synopsis: "stop ID",
    summary: "stop one server; it stays registered and its next call starts it again",
    arguments: [SERVER_ID],
    examples: ["mcpool stop echo"],
  },
  {
    name: "restart",
    run: async () => (await import("./commands/restart.js")).restartCommand,
    synopsis: "restart [ID]",
    summary:
      "restart one server; with no ID, restart the daemon from the installed code and hand it the running servers (same processes, nothing started again)",
    arguments: [["[ID]", "a server's id: its key in mcp.json; none: the whole daemon"]],
    examples: ["mcpool restart echo", "mcpool restart"],
  },
  {
    name: "reload",
    run: async () => (await import("./commands/servers.js")).reloadCommand,
    synopsis: "reload",
    summary: "re-read mcp.json and reconcile now (exit 2 when it does not parse)",
    examples: ["mcpool reload"],
  },
  {
    name: "validate",
    run: async () => (await import("./commands/validate.js")).validateCommand,
    synopsis: "validate [FILE]",
    summary:
      "check an mcp.json without the daemon: every problem and warning with its line and column",
    arguments: [["FILE", "the file (default: --config, $MCPOOL_CONFIG, else the per-user one)"]],
    examples: ["mcpool validate", "mcpool validate ./mcp.json --json"],
  },
  {
    name: "approve",
    run: async () => (await import("./commands/approve.js")).approveCommand,
    synopsis: "approve ID [--show]",
    summary: "what changed in a pinned server's tools; approve it (writes the pin into mcp.json)",
    arguments: [SERVER_ID],
    options: [["--show", "only show what changed, approve nothing"]],
    examples: ["mcpool approve github --show", "mcpool approve github"],
  },
  {
    name: "login",
    run: async () => (await import("./commands/login.js")).loginCommand,
    synopsis: "login ID [--no-browser] [--force]",
    summary:
      "sign in to an http server (OAuth) when the daemon says it needs one, and hand the tokens to the daemon",
    arguments: [SERVER_ID],
    options: [
      ["--no-browser", "print the sign-in address instead of opening a browser"],
      ["--force", "sign in even when the daemon does not ask for it"],
    ],
    examples: ["mcpool login linear", "mcpool login linear --no-browser"],
  },
  {
    name: "logout",
    run: async () => (await import("./commands/login.js")).logoutCommand,
    synopsis: "logout ID",
    summary: "forget a server's sign-in",
    arguments: [SERVER_ID],
    examples: ["mcpool logout linear"],
  },
  {
    name: "import",
    run: async () => (await import("./commands/setup.js")).importCommand,
    synopsis: "import [--from HOST[,HOST]] [--write]",
    summary:
      "merge the servers of every host you have into mcp.json: a diff, written with --write (a backup is kept)",
    options: [
      ["--from HOSTS", `only these hosts, comma-separated: ${HOSTS}`],
      ["--write", "write the merged mcp.json (default: print the diff only)"],
    ],
    examples: ["mcpool import", "mcpool import --from cursor,claude-desktop --write"],
  },
  {
    name: "bridge",
    run: async () => (await import("./commands/bridge.js")).bridgeCommand,
    synopsis:
      "bridge [--server ID | --servers A,B] [--http PORT [--token T|none]] [--catalog[=auto]]",
    summary: "serve the pool to an MCP host (stdio, or HTTP on 127.0.0.1)",
    options: [
      ["--server ID", "one server, under its own tool names"],
      ["--servers IDS", "these servers, comma-separated, under qualified names"],
      ["--http PORT", "serve Streamable HTTP on 127.0.0.1:PORT instead of stdio (0: any port)"],
      ["--token TOKEN", "the bearer token HTTP clients must send (none: no token)"],
      [
        "--catalog MODE",
        "tools on demand: the rows' alwaysLoad tools and search, describe and call tools of the pool's own; what a search finds joins the session (bare --catalog; =auto: also the tools this user calls most)",
      ],
      [
        "--catalog-tokens N",
        "with --catalog=auto: the token budget of the most-called tools (default 1000)",
      ],
    ],
    examples: [
      "mcpool bridge",
      "mcpool bridge --server github",
      "mcpool bridge --http 8765",
      "mcpool bridge --catalog=auto",
    ],
  },
  {
    name: "wire",
    run: async () => (await import("./commands/setup.js")).wireCommand,
    synopsis: "wire HOST [--write] [--catalog[=auto] [--one-entry]]",
    summary: "point a host's entries that mcpool also has at `mcpool bridge --server ID`",
    arguments: [["HOST", HOSTS]],
    options: [
      ["--write", "rewrite the host's file (a backup is kept; default: the diff only)"],
      ["--catalog MODE", "write catalog entries (`bridge --server ID --catalog[=auto]`)"],
      [
        "--one-entry",
        "with --catalog: one pool-wide catalogue entry, `mcpool` (`bridge --catalog[=auto]`), in place of the entries mcpool has (`mcpool unwire` puts them back)",
      ],
    ],
    examples: [
      "mcpool wire cursor",
      "mcpool wire claude-desktop --write",
      "mcpool wire claude-code --catalog --write",
      "mcpool wire claude-code --catalog --one-entry --write",
    ],
  },
  {
    name: "unwire",
    run: async () => (await import("./commands/setup.js")).unwireCommand,
    synopsis: "unwire HOST [--write]",
    summary:
      "put back, as they were before `mcpool wire`, the host's entries wire pointed at the pool (and take out its pool-wide catalogue entry); an entry with no record of that gets its row's connection (stdio or http) from mcp.json, and a pool-wide entry with none is taken out",
    arguments: [["HOST", HOSTS]],
    options: [["--write", "rewrite the host's file (a backup is kept; default: the diff only)"]],
    examples: ["mcpool unwire claude-code", "mcpool unwire claude-code --write"],
  },
  {
    name: "logs",
    run: async () => (await import("./commands/logs.js")).logsCommand,
    synopsis: "logs [-n N] [-f] [--server ID]",
    summary: "the tail of the daemon's log",
    options: [
      ["-n N", "the last N lines (default 50)"],
      ["-f, --follow", "keep printing what is written, through rotation"],
      ["--server ID", "only the lines about one server"],
    ],
    examples: ["mcpool logs -n 200", "mcpool logs -f --server echo --json"],
  },
  {
    name: "shutdown",
    run: async () => (await import("./commands/servers.js")).shutdownCommand,
    synopsis: "shutdown",
    summary: "stop the daemon and every server",
    examples: ["mcpool shutdown"],
  },
  {
    name: "service",
    run: async () => (await import("./commands/setup.js")).serviceCommand,
    synopsis: "service install|uninstall|status [--dry-run]",
    summary: "run the daemon at login under systemd (Linux) or launchd (macOS)",
    arguments: [["install|uninstall|status", "what to do with the service"]],
    options: [["--dry-run", "say what would be written and run, do nothing"]],
    examples: ["mcpool service install --dry-run", "mcpool service status"],
  },
  {
    name: "demo",
    run: async () => (await import("./commands/demo.js")).demoCommand,
    synopsis: "demo",
    summary: "pool the built-in echo server in this process, print its tools and one call",
    examples: ["mcpool demo", "mcpool demo --json"],
  },
  {
    name: "echo-server",
    run: async () => (await import("./commands/demo.js")).echoServerCommand,
    synopsis: "echo-server",
    summary:
      "the built-in echo MCP server on stdin and stdout, what the starter mcp.json runs; it ends with its input",
    examples: ["mcpool echo-server"],
  },
  {
    name: "help",
    synopsis: "help [COMMAND]",
    summary: "this list, or one command's help (as `mcpool COMMAND --help`)",
    arguments: [["COMMAND", "a command above"]],
    examples: ["mcpool help call"],
  },
] as const satisfies readonly CommandHelp[];

type Flag =
  | (typeof GLOBAL_OPTIONS)[number][0]
  | NonNullable<Extract<(typeof COMMANDS)[number], { options: unknown }>["options"]>[number][0];

/** The name parseArgs files a flag under, as parseFlag reads it: `-f, --follow` → follow. */
type FlagName<F extends string> = F extends `-${string}, ${infer Long}`
  ? FlagName<Long>
  : F extends `--${infer Name} ${string}`
    ? Name
    : F extends `--${infer Name}`
      ? Name
      : F extends `-${infer Letter} ${string}`
        ? Letter
        : F extends `-${infer Letter}`
          ? Letter
          : never;

/** A flag with a value after its name is a string option; one without, a boolean. */
type FlagValue<F extends string> = F extends `-${string}, ${infer Long}`
  ? FlagValue<Long>
  : F extends `${string} ${string}`
    ? string
    : boolean;

/** What parseArgs gives back for parseOptions(), typed from the table itself. */
export type ParsedOptions = { [F in Flag as FlagName<F>]?: FlagValue<F> };

/** The command called `name`, if there is one. */
export function commandNamed(name: string): CommandHelp | undefined {
  const table: readonly CommandHelp[] = COMMANDS;
  return table.find((c) => c.name === name);
}

/**
 * The loader of the runner of the command called `name`, if it has one. Typed so that a
 * runner reading a flag other than as it is parsed (`--limit` as a number) does not compile.
 */
export function commandRunner(name: string): (() => Promise<Runner<ParsedOptions>>) | undefined {
  const table: readonly { name: string; run?: () => Promise<Runner<ParsedOptions>> }[] = COMMANDS;
  return table.find((c) => c.name === name)?.run;
}

export interface ParsedFlag {
  /** The long name, or the letter of a short-only flag (`-n`). */
  name: string;
  short?: string;
  type: "string" | "boolean";
}

/** `-f, --follow` → follow, short f, boolean; `--limit N` → limit, string; `-n N` → n. */
export function parseFlag(flag: string): ParsedFlag {
  const match = /^(?:-([A-Za-z])(?:, |(?= )|$))?(?:--([a-z][a-z-]*))?(?: (\S+))?$/.exec(flag);
  const name = match?.[2] ?? match?.[1];
  if (!match || name === undefined) throw new Error(`not a flag: "${flag}"`);
  return {
    name,
    ...(match[1] !== undefined && match[2] !== undefined ? { short: match[1] } : {}),
    type: match[3] === undefined ? "boolean" : "string",
  };
}

/**
 * What node:util's parseArgs is given: every option of every command and the global ones.
 * A name spelt with two types in the table is a mistake in the table, and throws.
 */
export function parseOptions(): Record<string, { type: "string" | "boolean"; short?: string }> {
  // A command's own options are typed as literals; read here as any flag.
  const table: readonly CommandHelp[] = COMMANDS;
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  const flags = [...GLOBAL_OPTIONS, ...table.flatMap((c) => c.options ?? [])];
  for (const [flag] of flags) {
    const { name, short, type } = parseFlag(flag);
    const known = options[name];
    if (known !== undefined && known.type !== type) {
      throw new Error(`--${name} is both a ${known.type} and a ${type} option`);
    }
    options[name] = { type, ...(short !== undefined ? { short } : {}) };
  }
  return options;
}
