/**
 * `mcpool logs [-n N] [-f] [--server ID] [--json]`: the daemon's log file, its last N
 * lines, then (`-f`) what is appended. `--server ID` keeps the entries about one server
 * (issue 17): the pool writes them as `mcpool: <id>: …`, and the lines that continue an
 * entry — a crash's stderr tail — go with it.
 */
import { readFile } from "node:fs/promises";
import { printable } from "../../pool/core/printable.js";
import { logEntries, type LogEntry } from "../output/messages.js";
import { terminalText } from "../output/terminal.js";

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

export async function showLog(file: string, options: LogOptions): Promise<number> {
  const text = await readFile(file, "utf8").catch(() => "");
  // Written printable since F8; a file from before may still hold escape codes. On a
  // terminal the one sanitiser (SPEC K1) shows them; in JSON they are left out, as before.
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
