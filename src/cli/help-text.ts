/**
 * The help the command table (commands.ts) makes: `mcpool --help`, every command with its
 * summary, the global options and the exit codes; and `mcpool COMMAND --help`.
 */
import { COMMANDS, GLOBAL_OPTIONS, type CommandHelp } from "./commands.js";
import { EXIT_CODES } from "./output/exit-codes.js";

/** The column the summaries start at in the global usage. */
const SYNOPSIS_WIDTH = 40;
/** Lines of help are wrapped to fit a terminal of this many columns. */
const WIDTH = 100;

/** `text` in lines of at most `width` characters, broken at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** Two columns: the first padded to `width`, the second wrapped beside it. */
function columns(rows: readonly (readonly [string, string])[], indent: string): string[] {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  const out: string[] = [];
  for (const [left, right] of rows) {
    const [first = "", ...more] = wrap(right, WIDTH - indent.length - width);
    out.push(`${indent}${left.padEnd(width)}${first}`.trimEnd());
    for (const line of more) out.push(`${indent}${" ".repeat(width)}${line}`);
  }
  return out;
}

/** `mcpool --help`: every command with its summary, the options, the exit codes. */
export function usageText(): string {
  const lines = ["usage: mcpool <command> [options]", "", "commands:"];
  const table: readonly CommandHelp[] = COMMANDS;
  for (const command of table) {
    const left = `  ${command.synopsis}`;
    const summary = wrap(command.summary, WIDTH - SYNOPSIS_WIDTH - 2);
    const pad = " ".repeat(SYNOPSIS_WIDTH + 2);
    if (left.length < SYNOPSIS_WIDTH + 1) {
      lines.push(`${left.padEnd(SYNOPSIS_WIDTH + 2)}${summary[0] ?? ""}`);
      for (const line of summary.slice(1)) lines.push(`${pad}${line}`);
    } else {
      lines.push(left, ...summary.map((line) => `${pad}${line}`));
    }
  }
  return [
    ...lines,
    "",
    "options:",
    ...columns(GLOBAL_OPTIONS, "  "),
    "environment: MCPOOL_SOCKET, MCPOOL_CONFIG",
    "",
    "exit codes:",
    ...columns(
      EXIT_CODES.map((e) => [String(e.code), e.meaning]),
      "  ",
    ),
    "",
    "`mcpool COMMAND --help` (or `mcpool help COMMAND`) shows one command's arguments, options and examples.",
  ].join("\n");
}

/** `mcpool COMMAND --help`: its usage line, what it does, arguments, options, examples. */
export function commandHelpText(command: CommandHelp): string {
  const sections = [`usage: mcpool ${command.synopsis}`, "", ...wrap(command.summary, WIDTH)];
  if (command.arguments?.length) {
    sections.push("", "arguments:", ...columns(command.arguments, "  "));
  }
  if (command.options?.length) sections.push("", "options:", ...columns(command.options, "  "));
  sections.push(
    "",
    `global options: ${GLOBAL_OPTIONS.map(([flag]) => flag.replace(", ", "/")).join(", ")}`,
    "",
    command.examples.length > 1 ? "examples:" : "example:",
    ...command.examples.map((e) => `  ${e}`),
  );
  return sections.join("\n");
}
