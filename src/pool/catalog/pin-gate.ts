/**
 * The pin gate: a server whose live list stops matching its row's pin has its
 * tools withheld; a call to one of them is refused with `pin-mismatch` and why; a person
 * approves a list by its fingerprint. The ledger (pinning.ts) remembers approved lists.
 */
import { McpPoolError } from "../core/errors.js";
import { PinLedger, samePin } from "./pinning.js";
import type { ServerEntry } from "../server/entry.js";
import type { ToolIndex } from "./tool-index.js";
import type { PinInfo, PoolEvent, PoolLog } from "../core/types.js";
import { serverLog } from "../core/server-log.js";

export class PinGate {
  readonly #ledger: PinLedger;
  readonly #log: PoolLog;
  readonly #emit: (event: PoolEvent) => void;
  /** false: the pool indexes no tools, so there is no list to hold against a pin. */
  readonly #checks: boolean;

  constructor(
    ledger: PinLedger,
    options: { log: PoolLog; emit: (event: PoolEvent) => void; checks: boolean },
  ) {
    this.#ledger = ledger;
    this.#log = options.log;
    this.#emit = options.emit;
    this.#checks = options.checks;
  }

  /** How a withheld server's list differs from the approved one, for state(). */
  diff(entry: ServerEntry): ReturnType<PinLedger["diff"]> {
    return this.#ledger.diff(entry);
  }

  /**
   * What a person approving a server's tools is shown: the row's pin, the live list and,
   * when the pin store knows the list the pin was approved for, what changed since. Dials
   * an idle server, so the list shown is a live one and not a last-known one.
   */
  async info(entry: ServerEntry): Promise<PinInfo> {
    entry.busy();
    try {
      if (!entry.connection) await entry.ensure();
      await entry.settled();
    } finally {
      entry.idle();
    }
    const fingerprint = entry.fingerprint;
    if (fingerprint === undefined) {
      throw new McpPoolError(
        "connection-lost",
        `server "${entry.id}" has no tool list to approve`,
        {
          serverId: entry.id,
        },
      );
    }
    return this.#ledger.info({ id: entry.id, row: entry.row, fingerprint, tools: entry.tools });
  }

  /**
   * Records that a person approved the live list hashing to `fingerprint`, refusing
   * (`pin-mismatch`) when the list has moved on since it was shown.
   */
  async approve(entry: ServerEntry, fingerprint: string): Promise<PinInfo> {
    const info = await this.info(entry);
    const id = entry.id;
    if (!samePin(fingerprint, info.fingerprint)) {
      throw new McpPoolError(
        "pin-mismatch",
        `the tools of server "${id}" changed after they were shown (they now hash to ${info.fingerprint.slice(0, 12)}…); look again with \`mcpool approve ${id} --show\``,
        { serverId: id, expected: fingerprint, actual: info.fingerprint },
      );
    }
    await this.#ledger.save(info);
    return info;
  }

  /** Emits pin-mismatch for a server whose list stopped matching its row's pin (once per list). */
  check(entry: ServerEntry): void {
    const event = this.#ledger.check(entry, entry.removed || !this.#checks);
    if (!event) return;
    const { diff } = event;
    serverLog(this.#log, entry.id).error(
      `its tools no longer match the approved pin and are withheld${diff ? ` (added: ${diff.added.join(", ") || "none"}; removed: ${diff.removed.join(", ") || "none"}; changed: ${diff.changed.join(", ") || "none"})` : ""}; review with \`mcpool approve ${entry.id} --show\``,
    );
    this.#emit(event);
  }

  /** A name only a withheld server lists, in scope and not hidden: refused with why. */
  refuseWithheld(
    index: ToolIndex,
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    hidden: boolean,
  ): void {
    const withheld = index.withheld.get(qualified);
    // Not connected: its list is a last-known one; the caller dials it and looks again.
    if (!withheld?.entry.connection) return;
    const { entry, tool } = withheld;
    if (scope && !scope.has(entry.id)) return;
    if (!hidden && (entry.row.hiddenTools ?? []).includes(tool.name)) return;
    throw new McpPoolError(
      "pin-mismatch",
      `the tools of server "${entry.id}" changed since they were approved and are withheld; review the change and run \`mcpool approve ${entry.id}\``,
      { serverId: entry.id, expected: entry.row.pin, actual: entry.fingerprint },
    );
  }
}
