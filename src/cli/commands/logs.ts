/**
 * `mcpool logs [-n N] [-f] [--server ID] [--json]`: the daemon's log file, its last N
 * lines, then (`-f`) what is appended. `--server ID` keeps the entries about one server:
 * the pool writes them as `mcpool: <id>: …`, and the lines that continue an
 * entry — a crash's stderr tail — go with it.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { printable } from "../../pool/core/printable.js";
import { logEntries, type LogEntry } from "../output/messages.js";
import { terminalText } from "../output/terminal.js";
import type { CommandContext } from "./context.js";

export interface LogOptions {
  lines: number;
  follow: boolean;
  server?: string;
  json: boolean;
  out(line: string): void;
}

function render(entry: LogEntry): string {
  return entry.time === "" ? entry.message : `${entry.time} ${entry.level} ${entry.message}`;
}

/**
 * The log file's text; "" when there is none. Opened without following a link: one planted
 * at the path names a file the daemon never wrote (it refuses to write through a link), so
 * it is refused here too, never printed.
 */
async function readLog(file: string): Promise<string> {
  try {
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "";
    if (code === "ELOOP") {
      throw new Error(
        `${file} is a symbolic link, not the daemon's log (it never writes through a link): not following it; remove it and restart the daemon`,
      );
    }
    throw error;
  }
}

export async function showLog(file: string, options: LogOptions): Promise<number> {
  const text = await readLog(file);
  // Written printable now; a file from before may still hold escape codes. On a
  // terminal the one sanitiser shows them; in JSON they are left out, as before.
  const clean = (chunk: string): string =>
    options.json ? printable(chunk, { multiline: true }) : terminalText(chunk, { multiline: true });
  const { server } = options;
  const show = (chunk: string): void => {
    if (server === undefined && !options.json) return options.out(chunk);
    for (const entry of logEntries(chunk.split("\n"))) {
      if (server !== undefined && entry.server !== server) continue;
      options.out(options.json ? JSON.stringify(entry) : render(entry));
    }
  };
  const all = text.trimEnd().split("\n");
  const tail =
    server === undefined
      ? all.slice(-options.lines).join("\n")
      : logEntries(all)
          .filter((e) => e.server === server)
          .slice(-options.lines)
          .map(render)
          .join("\n");
  if (tail !== "") show(clean(tail));
  if (!options.follow) return 0;
  const { followLog } = await import("./follow-log.js");
  return followLog(file, Buffer.byteLength(text), (line) => show(clean(line)));
}

/** `mcpool logs [-n N] [-f] [--server ID]`. */
export function logsCommand(
  context: CommandContext<{ n?: string; follow?: boolean; server?: string }>,
): Promise<number> {
  const { n, follow, server } = context.flags;
  return showLog(context.logFile(), {
    lines: Number(n ?? 50),
    follow: follow === true,
    ...(server !== undefined ? { server } : {}),
    json: context.json,
    out: context.out,
  });
}
