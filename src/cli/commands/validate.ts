/**
 * `mcpool validate [FILE]`: an mcp.json checked without the daemon, each problem
 * as `file:line:col: message`, warnings apart. Exit 0 when it has no problem, 2 otherwise.
 */
import { readFile } from "node:fs/promises";
import { ConfigSyntaxError, parseMcpJson } from "../../config/mcp-json.js";
import { EXIT } from "../output/exit-codes.js";
import { terminalText } from "../output/terminal.js";
import type { CommandContext } from "./context.js";

export interface ValidateOptions {
  json: boolean;
  out(line: string): void;
  err(line: string): void;
}

export async function validate(path: string, options: ValidateOptions): Promise<number> {
  const { json, out } = options;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    options.err(`mcpool: cannot read ${path}: ${(error as Error).message}`);
    return EXIT.badInput;
  }
  try {
    const { rows, problems, warnings } = parseMcpJson(text);
    if (json)
      out(
        JSON.stringify(
          { ok: problems.length === 0, rows: rows.length, problems, warnings },
          null,
          2,
        ),
      );
    else {
      // A key is the file's text: one line each, whatever it holds.
      for (const p of problems)
        out(`${path}:${p.line ?? 1}:${p.column ?? 1}: ${terminalText(p.message)}`);
      // Not problems: the variable may be set where the daemon runs.
      for (const w of warnings)
        out(`${path}:${w.line ?? 1}:${w.column ?? 1}: warning: ${terminalText(w.message)}`);
      out(`${rows.length} valid server(s), ${problems.length} problem(s)`);
    }
    return problems.length === 0 ? EXIT.ok : EXIT.badInput;
  } catch (error) {
    if (error instanceof ConfigSyntaxError) {
      if (json)
        out(
          JSON.stringify({
            ok: false,
            error: error.reason,
            line: error.line,
            column: error.column,
          }),
        );
      else out(`${path}:${error.line}:${error.column}: ${error.reason}`);
      return EXIT.badInput;
    }
    throw error;
  }
}

/** `mcpool validate [FILE]`: FILE, else the mcp.json `--config` or the environment names. */
export function validateCommand(context: CommandContext): Promise<number> {
  const { json, out, err } = context;
  return validate(context.args[0] ?? context.configPath(), { json, out, err });
}
