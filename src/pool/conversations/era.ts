/**
 * A conversation row's era. Its clients get no spare child each (one child per
 * conversation, `initialize` first would serve a dual-era server legacy), so the row's own
 * verdict — on the pool's registered entry of the row, kept with its tools cache — is each
 * new client's. A row with none (or only an old legacy one) has it found once, on a spare
 * child of the row (server/spare-probe.ts) before its next client dials; the verdict is
 * kept on the row's entry and saved with the tools cache, for every later conversation and
 * the next daemon. Concurrent first conversations wait on the same probe.
 */
import type { McpServerConfig } from "../../config/rows.js";
import { sameConnection } from "../../config/same-connection.js";
import type { EraVerdict } from "../core/era.js";
import type { EntryContext } from "../server/context.js";
import type { ServerEntry } from "../server/entry.js";
import { probeOnSpare, spareProbeOf } from "../server/spare-probe.js";

export interface RowErasInit {
  /** The pool's entry context (its spare probe and tools cache). */
  context: EntryContext;
  /** The pool's registered entry of a row, which holds the row's verdict. */
  entryOf(serverId: string): ServerEntry | undefined;
}

export class RowEras {
  readonly #init: RowErasInit;
  /** Row id → the probe in flight for it. */
  readonly #finding = new Map<string, Promise<EraVerdict>>();

  constructor(init: RowErasInit) {
    this.#init = init;
  }

  /** The verdict a new client of `row` dials on; undefined: its own dial finds it. */
  async of(row: McpServerConfig): Promise<EraVerdict | undefined> {
    const { context } = this.#init;
    const entry = this.#init.entryOf(row.id);
    if (entry === undefined || !sameConnection(entry.row, row)) return undefined;
    if (spareProbeOf(row, entry.verdict, context, Date.now()) === undefined) return entry.verdict;
    let finding = this.#finding.get(row.id);
    if (finding === undefined) {
      finding = probeOnSpare(row, context, row.connectTimeoutMs ?? context.connectTimeoutMs);
      this.#finding.set(row.id, finding);
      void finding.then((verdict) => {
        this.#finding.delete(row.id);
        // A row edited meanwhile has a verdict of its own to find.
        if (this.#init.entryOf(row.id) !== entry || !sameConnection(entry.row, row)) return;
        entry.learnVerdict(verdict);
        if (context.indexTools) context.listed(entry);
      });
    }
    return finding;
  }
}
