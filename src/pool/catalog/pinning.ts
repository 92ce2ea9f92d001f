/**
 * Tool pinning (core/fingerprint.ts): a row's `pin` is the
 * fingerprint of a tool list a person approved. While the live list hashes to something
 * else, the tool index withholds that server's tools from everything built on it, and the
 * pool reports `pin-mismatch` with what changed — the "rug pull" is caught, not just shown.
 *
 * This file holds the rule, the difference a person is shown, the contract of the store
 * that remembers each approved list (the daemon keeps one in its data directory, since a
 * difference can only be computed against something stored), and the pool's ledger of
 * what it has reported.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson, toolsFingerprint } from "../core/fingerprint.js";
import type { PinDiff, PinInfo, PinnedTool, PoolEvent, ToolChange } from "../core/types.js";

/** The list a pin was approved for, as a store keeps it. */
export interface PinnedList {
  /** toolsFingerprint(tools). */
  fingerprint: string;
  tools: PinnedTool[];
}

/** Where approved lists outlive the process, one per server id (the latest approval). */
export interface PinStore {
  /** Read when a server's list stops matching its pin; synchronous, so state() can show it. */
  load(id: string): PinnedList | undefined;
  /** Handed the live list a person approved. */
  save(id: string, list: PinnedList): void | Promise<void>;
}

/** Whether a row's pin withholds a server whose current list hashes to `fingerprint`. */
export function pinWithholds(row: { pin?: string }, fingerprint: string | undefined): boolean {
  return row.pin !== undefined && fingerprint !== undefined && !samePin(row.pin, fingerprint);
}

/** Fingerprints are lowercase hex; a pin typed in capitals still names the same list. */
export function samePin(pin: string, fingerprint: string): boolean {
  return pin.toLowerCase() === fingerprint.toLowerCase();
}

/** The fields a fingerprint covers, and nothing else: what an approval is about. */
export function pinnedToolOf(tool: PinnedTool | Tool): PinnedTool {
  return structuredClone({
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema !== undefined
      ? { outputSchema: tool.outputSchema as Record<string, unknown> }
      : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
  });
}

/** One tool's fingerprint: the whole-list hash of a list of one, so the two never disagree. */
function digest(tool: PinnedTool): string {
  return toolsFingerprint([tool as Tool]);
}

/**
 * Names added, removed and changed between the approved list and the live one. A changed
 * tool keeps its name and differs in anything the fingerprint covers, an annotation flip
 * included. Added follow the live order, removed the approved order.
 */
export function diffTools(approved: readonly PinnedTool[], live: readonly PinnedTool[]): PinDiff {
  const before = new Map(approved.map((tool) => [tool.name, tool]));
  const after = new Map(live.map((tool) => [tool.name, tool]));
  const changed: string[] = [];
  const added: string[] = [];
  for (const [name, tool] of after) {
    const was = before.get(name);
    if (!was) added.push(name);
    else if (digest(was) !== digest(tool)) changed.push(name);
  }
  const removed = [...before.keys()].filter((name) => !after.has(name));
  return { added, removed, changed };
}

/** For each changed tool, one short line per thing that changed, for a person deciding. */
export function describeChanges(
  approved: readonly PinnedTool[],
  live: readonly PinnedTool[],
): ToolChange[] {
  const before = new Map(approved.map((tool) => [tool.name, tool]));
  const out: ToolChange[] = [];
  for (const name of diffTools(approved, live).changed) {
    const was = before.get(name)!;
    const now = live.find((tool) => tool.name === name)!;
    out.push({ name, changes: changesOf(was, now) });
  }
  return out;
}

function changesOf(was: PinnedTool, now: PinnedTool): string[] {
  const lines: string[] = [];
  if (was.title !== now.title) lines.push(`title: ${text(was.title)} → ${text(now.title)}`);
  if (was.description !== now.description) {
    const [a, b] = excerpts(was.description ?? "", now.description ?? "");
    lines.push(
      `description: ${was.description === undefined ? "unset" : a} → ${now.description === undefined ? "unset" : b}`,
    );
  }
  lines.push(...schemaChanges("input schema", was.inputSchema, now.inputSchema));
  lines.push(...schemaChanges("output schema", was.outputSchema, now.outputSchema));
  const a = (was.annotations ?? {}) as Record<string, unknown>;
  const b = (now.annotations ?? {}) as Record<string, unknown>;
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (canonicalJson(a[key]) !== canonicalJson(b[key])) {
      lines.push(`${key}: ${value(a[key])} → ${value(b[key])}`);
    }
  }
  // Only a field the lines above do not read (none today) could leave this empty.
  if (lines.length === 0) lines.push("changed");
  return lines;
}

/** Characters of a description shown on each side of a change. */
const EXCERPT_CHARS = 120;
/** Characters of shared text kept before the first difference, for context. */
const EXCERPT_LEAD = 30;

/**
 * Both texts from a little before their first difference, each cut to EXCERPT_CHARS: a
 * long description with one sentence swapped shows that sentence, not its shared opening.
 */
function excerpts(a: string, b: string): [string, string] {
  let same = 0;
  while (same < a.length && same < b.length && a[same] === b[same]) same++;
  const start = same > EXCERPT_LEAD ? same - EXCERPT_LEAD : 0;
  const cut = (s: string): string => {
    const body = s.slice(start, start + EXCERPT_CHARS);
    return `${start > 0 ? "…" : ""}${JSON.stringify(body).slice(1, -1)}${start + EXCERPT_CHARS < s.length ? "…" : ""}`;
  };
  return [`"${cut(a)}"`, `"${cut(b)}"`];
}

function schemaChanges(
  label: string,
  was: Record<string, unknown> | undefined,
  now: Record<string, unknown> | undefined,
): string[] {
  if (canonicalJson(was) === canonicalJson(now)) return [];
  if (was === undefined) return [`${label} added`];
  if (now === undefined) return [`${label} removed`];
  const parts: string[] = [];
  const a = record(was.properties);
  const b = record(now.properties);
  const added = Object.keys(b).filter((key) => !(key in a));
  const removed = Object.keys(a).filter((key) => !(key in b));
  const changed = Object.keys(b).filter(
    (key) => key in a && canonicalJson(a[key]) !== canonicalJson(b[key]),
  );
  if (added.length > 0) parts.push(`properties added: ${added.join(", ")}`);
  if (removed.length > 0) parts.push(`properties removed: ${removed.join(", ")}`);
  if (changed.length > 0) parts.push(`properties changed: ${changed.join(", ")}`);
  if (canonicalJson(was.required ?? []) !== canonicalJson(now.required ?? [])) {
    parts.push(
      `required: ${canonicalJson(was.required ?? [])} → ${canonicalJson(now.required ?? [])}`,
    );
  }
  const rest = (schema: Record<string, unknown>): string => {
    const { properties: _p, required: _r, ...others } = schema;
    return canonicalJson(others);
  };
  if (rest(was) !== rest(now)) parts.push("other keywords changed");
  return [`${label}: ${parts.join("; ")}`];
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function text(value: string | undefined): string {
  return value === undefined ? "unset" : JSON.stringify(value);
}

function value(item: unknown): string {
  return item === undefined ? "unset" : canonicalJson(item);
}

/** What the ledger reads of a server: its row's pin and its current list. */
export interface PinSubject {
  id: string;
  row: { pin?: string };
  fingerprint: string | undefined;
  tools: readonly Tool[];
}

/**
 * The pool's memory of pins: which mismatch it has reported (an event fires once per pin
 * and list, not on every reindex), the differences it has computed, and the store that
 * holds approved lists. Reports nothing for a pool that lists no tools.
 */
export class PinLedger {
  readonly #store: PinStore | undefined;
  readonly #onStoreError: (id: string, error: Error) => void;
  /** Per server: the `<pin>\0<fingerprint>` last reported. */
  readonly #reported = new Map<string, string>();
  /** Per server: the difference computed for `<pin>\0<fingerprint>` (undefined: not known). */
  readonly #diffs = new Map<string, { key: string; diff: PinDiff | undefined }>();

  constructor(store: PinStore | undefined, onStoreError: (id: string, error: Error) => void) {
    this.#store = store;
    this.#onStoreError = onStoreError;
  }

  /**
   * The pin-mismatch event a server's current list calls for, if it was not reported yet;
   * a server that matches (or was removed: pass `gone`) is forgotten, so the next mismatch
   * is reported again.
   */
  check(
    subject: PinSubject,
    gone: boolean,
  ): Extract<PoolEvent, { type: "pin-mismatch" }> | undefined {
    const { id, row, fingerprint: actual } = subject;
    if (gone || row.pin === undefined || actual === undefined || !pinWithholds(row, actual)) {
      this.#reported.delete(id);
      this.#diffs.delete(id);
      return undefined;
    }
    const key = `${row.pin}\0${actual}`;
    if (this.#reported.get(id) === key) return undefined;
    this.#reported.set(id, key);
    const diff = this.diff(subject);
    return {
      type: "pin-mismatch",
      serverId: id,
      expected: row.pin,
      actual,
      ...(diff ? { diff: structuredClone(diff) } : {}),
    };
  }

  /** How the list differs from the one the row's pin was approved for; undefined if unknown. */
  diff(subject: PinSubject): PinDiff | undefined {
    const { id, row, fingerprint } = subject;
    if (row.pin === undefined) return undefined;
    const key = `${row.pin}\0${fingerprint}`;
    const cached = this.#diffs.get(id);
    if (cached?.key === key) return cached.diff;
    const approved = this.#approved(id, row.pin);
    const diff = approved ? diffTools(approved, subject.tools.map(pinnedToolOf)) : undefined;
    this.#diffs.set(id, { key, diff });
    return diff;
  }

  /** What a person approving the list is shown. */
  info(subject: PinSubject & { fingerprint: string }): PinInfo {
    const { id, row, fingerprint } = subject;
    const tools = subject.tools.map(pinnedToolOf);
    const info: PinInfo = {
      serverId: id,
      ...(row.pin !== undefined ? { pin: row.pin } : {}),
      fingerprint,
      tools,
      withheld: pinWithholds(row, fingerprint),
    };
    const approved = row.pin !== undefined ? this.#approved(id, row.pin) : undefined;
    if (approved) {
      info.approved = approved.map(pinnedToolOf);
      info.diff = diffTools(approved, tools);
      info.changes = describeChanges(approved, tools);
    }
    return info;
  }

  /** Keeps `info`'s live list as the one approved for its fingerprint. */
  async save(info: PinInfo): Promise<void> {
    await this.#store?.save(info.serverId, { fingerprint: info.fingerprint, tools: info.tools });
    this.#diffs.delete(info.serverId);
  }

  #approved(id: string, pin: string): PinnedTool[] | undefined {
    if (!this.#store) return undefined;
    try {
      const list = this.#store.load(id);
      return list && samePin(pin, list.fingerprint) ? list.tools : undefined;
    } catch (error) {
      this.#onStoreError(id, error as Error);
      return undefined;
    }
  }
}
