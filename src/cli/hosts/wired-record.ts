/**
 * What `mcpool wire --write` changed in a host's file, kept beside it
 * (`<file>.mcpool-wired.json`, written whole before the host's file) so `mcpool unwire` puts
 * each entry back as it was, in any format wire writes: the text wire replaced and the text it
 * put there, per entry. Unwire swaps them back only where the entry is still exactly as wire
 * left it; an entry changed since is left as it is and named. Text, not values: the entry's
 * own spelling (comments, order, quoting, an env table) comes back byte for byte.
 */
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostFormat, type HostName, type JsonPath } from "./configs.js";
import { hostEntries, parseHostText } from "./files.js";

/** Same value, whatever the parser's objects' prototypes (jsonc-parser's have none). */
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export const wiredRecordPath = (file: string): string => `${file}.mcpool-wired.json`;

/** One entry wire rewrote. */
export interface WiredEdit {
  name: string;
  path: JsonPath;
  /** The entry's value as wire left it (parsed from the wired file). */
  wired?: unknown;
  /** The text wire replaced, and the text it put in its place. */
  before: string;
  after: string;
  /** Which occurrence of `after` is this entry's, and how many there were, in the text it made. */
  ordinal: number;
  count: number;
}

export interface WiredRecord {
  edits: WiredEdit[];
}

/** Where `needle` starts in `text`, each one (overlapping ones too). */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
    found.push(at);
  }
  return found;
}

/** The edit that turned `from` into `to`: the changed middle, and where it starts. */
export function textEdit(
  from: string,
  to: string,
): { start: number; before: string; after: string } {
  let start = 0;
  while (start < from.length && start < to.length && from[start] === to[start]) start++;
  let end = 0;
  while (
    end < from.length - start &&
    end < to.length - start &&
    from[from.length - 1 - end] === to[to.length - 1 - end]
  ) {
    end++;
  }
  return {
    start,
    before: from.slice(start, from.length - end),
    after: to.slice(start, to.length - end),
  };
}

/**
 * Collects wire's edits one entry at a time (`add` after each rewrite, with the text before and
 * after it). Each is placed in the text it made, the one unwire sees once the later edits are
 * undone.
 */
export class WireEdits {
  readonly edits: WiredEdit[] = [];

  constructor(private readonly host: HostName) {}

  add(name: string, path: JsonPath, from: string, to: string): void {
    const { start, ...edit } = textEdit(from, to);
    const found = occurrences(to, edit.after);
    const parsed = parseHostText(hostFormat(this.host), to);
    const entries = "value" in parsed ? hostEntries(this.host, parsed.value) : [];
    const wired = entries.find((e) => same(e.path, path))?.value;
    this.edits.push({
      name,
      path,
      wired,
      ...edit,
      ordinal: found.indexOf(start),
      count: found.length,
    });
  }
}

/** The record beside `file`: empty when there is none; a sentence when it does not parse. */
export async function readWiredRecord(file: string): Promise<WiredRecord | string> {
  const at = wiredRecordPath(file);
  let text: string;
  try {
    text = await readFile(at, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { edits: [] };
    return `cannot read ${at} (${(error as Error).message}); nothing was changed`;
  }
  try {
    const parsed = JSON.parse(text) as Partial<WiredRecord> | null;
    if (Array.isArray(parsed?.edits)) return parsed as WiredRecord;
  } catch {
    // said below
  }
  return `${at} does not parse as the record of what wire changed (an "edits" list); fix or move it, nothing was changed`;
}

/** Writes the record whole (a temporary file renamed over it), or removes it when empty. */
export async function writeWiredRecord(file: string, record: WiredRecord): Promise<void> {
  const at = wiredRecordPath(file);
  if (record.edits.length === 0) return rm(at, { force: true });
  const tmp = `${at}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, at);
}

export interface Unwound {
  text: string;
  /** Entries put back as they were before wire. */
  restored: string[];
  /** Entries changed since wire (or moved), left as they are: `name (why)`. */
  left: string[];
  /** What stays in the record. */
  record: WiredRecord;
}

/** `text` with every entry of `record` still as wire left it put back, the latest edit first. */
export function unwindWired(host: HostName, text: string, record: WiredRecord): Unwound {
  let next = text;
  const restored: string[] = [];
  const left: string[] = [];
  const kept: WiredEdit[] = [];
  for (const edit of [...record.edits].reverse()) {
    const parsed = parseHostText(hostFormat(host), next);
    const entries = "value" in parsed ? hostEntries(host, parsed.value) : [];
    const entry = entries.find((e) => same(e.path, edit.path));
    if (entry === undefined) {
      left.push(`${edit.name} (no longer in the file)`);
      continue;
    }
    const found = occurrences(next, edit.after);
    const at = found[edit.ordinal];
    if (!same(entry.value, edit.wired) || found.length !== edit.count || at === undefined) {
      left.push(`${edit.name} (changed since wire; left as it is)`);
      kept.unshift(edit);
      continue;
    }
    next = next.slice(0, at) + edit.before + next.slice(at + edit.after.length);
    restored.push(edit.name);
  }
  return {
    text: next,
    restored: restored.reverse(),
    left: left.reverse(),
    record: { edits: kept },
  };
}
