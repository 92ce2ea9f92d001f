/**
 * What a command's runner is given: its arguments, the flags it reads, where its output
 * goes (`--json` chooses), and a client of the daemon opened on demand. main.ts makes one
 * per run from the parsed command line; the command table (../commands.ts) names each
 * command's runner, and checks that the flags a runner reads are the ones it parses.
 */
import type { PoolClient } from "mcpool-client";
import { resolvePaths } from "../../daemon/process/paths.js";
import { terminalText } from "../output/terminal.js";
import { UsageError } from "../output/usage-error.js";

/** The flags every command takes (the command table's global options). */
export interface GlobalFlags {
  json?: boolean;
  socket?: string;
  config?: string;
}

export interface CommandContext<Flags = object> {
  /** The command as typed: `hide` and `unhide` share a runner, as `stop` and `restart` do. */
  readonly name: string;
  /** The positional arguments after the command's name. */
  readonly args: readonly string[];
  readonly flags: Readonly<Flags & GlobalFlags>;
  /** `--json`. */
  readonly json: boolean;
  /** A line on stdout: under `--json` exactly as given, else through the terminal sanitiser. */
  out(line: string): void;
  /** A line for a person on stderr. */
  err(line: string): void;
  /** A line for a person on stdout, sanitised under `--json` too. */
  say(line: string): void;
  /** `value` as JSON under `--json`, else `text()`. */
  print(value: unknown, text: () => string): void;
  /** `--socket`, else `$MCPOOL_SOCKET`; undefined: the per-user one. */
  readonly socketPath: string | undefined;
  /** The socket to dial: `socketPath`, else the per-user one. */
  target(): string;
  /** The mcp.json: `--config`, else `$MCPOOL_CONFIG`, else the per-user one. */
  configPath(): string;
  /** The daemon's log file, where `logs` and `top` read it. */
  logFile(): string;
  /** The argument at `index`; a usage error saying the command needs `what` when it is missing. */
  arg(index: number, what: string): string;
  /** Runs `run` with a client of the daemon, closed after. */
  withClient<T>(run: (client: PoolClient) => Promise<T>): Promise<T>;
}

/** A command: resolves with its exit code, or throws for main.ts to report. */
export type Runner<Flags = object> = (context: CommandContext<Flags>) => Promise<number>;

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** Lines for a person pass the terminal sanitiser on their way out; JSON does not. */
const human = (line: string): string => terminalText(line, { multiline: true });

export const io: Io = {
  out: (line) => process.stdout.write(`${human(line)}\n`),
  err: (line) => process.stderr.write(`${human(line)}\n`),
};

/** `--json`: stdout is the document exactly as JSON.stringify wrote it. */
const jsonIo: Io = { out: (line) => process.stdout.write(`${line}\n`), err: io.err };

/** The context of one run of `name` with `args` and `flags`, as parsed from argv. */
export function commandContext<Flags>(
  name: string,
  args: readonly string[],
  flags: Readonly<Flags & GlobalFlags>,
): CommandContext<Flags> {
  const json = flags.json === true;
  const { out } = json ? jsonIo : io;
  const socketPath = flags.socket ?? process.env.MCPOOL_SOCKET;
  const target = (): string => socketPath ?? resolvePaths({}).socketPath;
  return {
    name,
    args,
    flags,
    json,
    out,
    err: io.err,
    say: io.out,
    print: (value, text) => out(json ? JSON.stringify(value, null, 2) : text()),
    socketPath,
    target,
    configPath: () => flags.config ?? process.env.MCPOOL_CONFIG ?? resolvePaths({}).configPath,
    logFile: () => `${resolvePaths({}).logDir}/mcpool.log`,
    arg: (index, what) => {
      const value = args[index];
      if (value === undefined) throw new UsageError(`${name} needs ${what}`);
      return value;
    },
    withClient: async (run) => {
      const { connect } = await import("mcpool-client");
      const client = await connect({ clientName: `mcpool-cli/${name}`, socketPath: target() });
      try {
        return await run(client);
      } finally {
        await client.close();
      }
    },
  };
}

/** `--catalog[=auto]` and `--catalog-tokens N`, which `bridge` and `wire` take. */
export function catalogOption(
  mode: string | undefined,
  tokens: string | undefined,
): { catalog?: { mode: "on" | "auto"; tokens?: number } } {
  if (mode === undefined) {
    if (tokens !== undefined) throw new UsageError("--catalog-tokens goes with --catalog=auto");
    return {};
  }
  if (mode !== "on" && mode !== "auto") {
    throw new UsageError(`--catalog takes nothing or =auto, not "${mode}"`);
  }
  if (tokens === undefined) return { catalog: { mode } };
  const budget = Number(tokens);
  if (!Number.isInteger(budget) || budget < 0) {
    throw new UsageError(`--catalog-tokens takes a number of tokens, not "${tokens}"`);
  }
  return { catalog: { mode, tokens: budget } };
}

/** What `catalogOption` reads. */
export interface CatalogFlags {
  catalog?: string;
  "catalog-tokens"?: string;
}
