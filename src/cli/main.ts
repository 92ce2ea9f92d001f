#!/usr/bin/env node
/**
 * The `mcpool` command. The only module allowed to call process.exit. It parses argv with
 * the options of commands.ts's table, answers `--version` and `--help` itself, looks the
 * command up in the table and runs its runner (commands/); what it exits with is
 * output/exit-codes.ts's.
 */
import { homedir } from "node:os";
import { parseArgs } from "node:util";
import { McpPoolError } from "mcpool-protocol";
import { VERSION } from "../version.js";
import { commandNamed, commandRunner, parseOptions, type ParsedOptions } from "./commands.js";
import { commandHelpText, usageText } from "./help-text.js";
import { commandContext, io } from "./commands/context.js";
import { watchLaunch } from "./commands/serve.js";
import { hostFilesHelp, isHostName } from "./hosts/configs.js";
import { EXIT } from "./output/exit-codes.js";
import { endQuietlyOnBrokenPipe, exitWhenFlushed, serveWithoutBrokenPipes } from "./output/exit.js";
import { UsageError } from "./output/usage-error.js";
import { errorText } from "./output/terminal.js";

// A command's module is imported when it runs: `serve` is a long-lived process whose memory
// is a product figure: it needs no bridge, login, import, wire, nor mcpool-client.
export { EXIT } from "./output/exit-codes.js";

async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs({
    // `--catalog` alone is `--catalog=on`: parseArgs has no option that takes a value or none.
    args: argv.map((arg) => (arg === "--catalog" ? "--catalog=on" : arg)),
    allowPositionals: true,
    options: parseOptions(),
  });
  // parseArgs files each value by the type parseOptions() gave it: the one ParsedOptions says.
  const values = parsed.values as ParsedOptions;
  const [command, ...rest] = parsed.positionals;
  // The bridge ends itself, cleanly, when its host stops reading (bridge.ts); the daemon
  // keeps serving with its log file when whoever read its stderr goes away.
  if (command === "serve") serveWithoutBrokenPipes();
  else if (command !== "bridge") endQuietlyOnBrokenPipe();
  if (values.version) {
    io.out(VERSION);
    return EXIT.ok;
  }
  if (command === undefined && !values.help) {
    // As git does: no command is a mistake, and the list of commands is the answer.
    io.err(usageText());
    return EXIT.badInput;
  }
  if (values.help || command === "help") {
    help(command === "help" && values.help !== true ? rest[0] : command, command, rest);
    return EXIT.ok;
  }
  const run = command === undefined ? undefined : commandRunner(command);
  if (command === undefined || run === undefined) {
    throw new UsageError(`unknown command "${command}"`, true);
  }
  return (await run())(commandContext(command, rest, values));
}

/**
 * `mcpool --help`, `mcpool COMMAND --help`, `mcpool help [COMMAND]`; `wire HOST --help` adds where
 * HOST's file is.
 */
function help(asked: string | undefined, command: string | undefined, rest: string[]): void {
  if (asked === undefined) {
    io.out(usageText());
    return;
  }
  const found = commandNamed(asked);
  if (!found) throw new UsageError(`unknown command "${asked}"`, true);
  io.out(commandHelpText(found));
  const host = command === "wire" ? rest[0] : undefined;
  if (host !== undefined && isHostName(host)) {
    io.out(hostFilesHelp(host, { home: homedir(), platform: process.platform, env: process.env }));
  }
}

/** Set before anything can fail: a bad flag fails a launched daemon too. */
watchLaunch();

/** The pool's refusals that mean the input named nothing there or did not fit: exit 2. */
const BAD_INPUT_CODES: ReadonlySet<string> = new Set([
  "invalid-arguments",
  "unknown-server",
  "unknown-tool",
]);

/** Says what went wrong; the exit code that means it. */
function failure(error: unknown): number {
  if (
    error instanceof UsageError ||
    (error as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION"
  ) {
    io.err(`mcpool: ${(error as Error).message}`);
    if (error instanceof UsageError && error.showUsage) io.err(`\n${usageText()}`);
    return EXIT.badInput;
  }
  if (error instanceof McpPoolError) {
    io.err(`mcpool: ${errorText(error.message)}`);
    if (error.code === "daemon-unavailable") {
      io.err("is the daemon running? start it with `mcpool serve` or `mcpool service install`");
      return EXIT.notRunning;
    }
    return BAD_INPUT_CODES.has(error.code) ? EXIT.badInput : EXIT.failed;
  }
  io.err(`mcpool: ${errorText(error instanceof Error ? error.message : String(error))}`);
  return EXIT.failed;
}

// Never process.exit() straight away: a pipe may not have taken the output yet.
void main(process.argv.slice(2)).then(exitWhenFlushed, (error: unknown) =>
  exitWhenFlushed(failure(error)),
);
