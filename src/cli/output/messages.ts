/**
 * What the `mcpool` command says when it has to say more than a result: that an
 * id names no server, that a stopped server comes back on its next call, that a table cut
 * an error short and where to read it whole, and the log as JSON lines for `--json`.
 */
import type { PoolClient } from "mcpool-client";
import { McpPoolError } from "mcpool-protocol";

/** The widest LAST ERROR cell `mcpool status` prints; longer errors end in `…`. */
export const ERROR_CELL_WIDTH = 60;

/**
 * Throws `unknown-server` (exit 2) unless `id` is a configured server: the daemon answers
 * a filter that matches nothing with nothing, and "no tools" would be a lie.
 */
export async function requireServer(client: PoolClient, id: string | undefined): Promise<void> {
  if (id === undefined) return;
  const ids = (await client.state()).map((s) => s.id);
  if (!ids.includes(id)) {
    const known = ids.length > 0 ? `; the servers are ${ids.join(", ")}` : "";
    throw new McpPoolError("unknown-server", `unknown server "${id}"${known}`);
  }
}

/** What `mcpool stop ID` did, and what undoes it: a stopped server starts on its next call. */
export function stoppedMessage(id: string): string {
  return `${id}: stopped; the next call to one of its tools starts it again (\`mcpool restart ${id}\` starts it now)`;
}

/** Whether `cell()` would cut this error: a second line, or a first line past the width. */
function isCut(error: string | undefined): boolean {
  if (error === undefined) return false;
  const [first = "", ...more] = error.split("\n");
  return more.length > 0 || first.length > ERROR_CELL_WIDTH;
}

/** The line under the status table when an error in it was cut, else nothing. */
export function cutErrorsHint(errors: readonly (string | undefined)[]): string[] {
  if (!errors.some(isCut)) return [];
  return ["", "errors ending in … are cut: `mcpool status --json` or `mcpool logs` has them whole"];
}

/** One line of the daemon's log: `<ISO time> <level> <message>`, and the server it is about. */
export interface LogEntry {
  time: string;
  level: string;
  message: string;
  server?: string;
}

const LOG_LINE = /^(\d{4}-\d\d-\d\dT[\d:.]+Z) (\w+) (.*)$/;

/** The pool writes what concerns one server as `mcpool: <id>: …`; ids hold no `/` or space. */
const SERVER_MESSAGE = /^mcpool: ([A-Za-z0-9_-]+): /;

/**
 * The log's lines as entries; a line that does not start with a time continues the message
 * before it (a multi-line message is written as one entry's several lines).
 */
export function logEntries(lines: readonly string[]): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const line of lines) {
    const match = LOG_LINE.exec(line);
    if (match) {
      const server = SERVER_MESSAGE.exec(match[3]!)?.[1];
      entries.push({
        time: match[1]!,
        level: match[2]!,
        message: match[3]!,
        ...(server !== undefined ? { server } : {}),
      });
    } else if (entries.length > 0) entries.at(-1)!.message += `\n${line}`;
    else if (line !== "") entries.push({ time: "", level: "", message: line });
  }
  return entries;
}
