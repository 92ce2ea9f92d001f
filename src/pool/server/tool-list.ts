/**
 * A server's tool list as the pool knows it: the last list it gave, its fingerprint, and
 * whether it is last-known (stale) rather than live (SPEC F1, B4). Re-listing after
 * tools/list_changed runs one walk at a time; a change asked for during a walk is walked
 * again once it ends.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

import { toolsFingerprint } from "../core/fingerprint.js";
import { listAllTools } from "../mcp/list-tools.js";
import type { McpClient } from "../mcp/client.js";
import type { PoolEvent } from "../core/types.js";

export type ToolsChanged = Extract<PoolEvent, { type: "tools-changed" }>;

/**
 * Walks in a row, each asked for by a list_changed that came during the one before, after
 * which the log says the server keeps changing its list (F12, K2): ten is past any server
 * that registers its tools in a few batches at start.
 */
export const RELIST_LOOP_AFTER = 10;

export class ToolList {
  /** The last list the server gave; empty after a crash. */
  tools: Tool[] = [];
  fingerprint: string | undefined;
  /** `tools` is a last-known list, not a live one. */
  stale = false;
  #relisting: Promise<void> | undefined;
  #relistAgain = false;

  /**
   * A live list: replaces the last one. Returns the tools-changed event when a list was
   * known before and this one hashes differently.
   */
  replace(serverId: string, tools: Tool[]): ToolsChanged | undefined {
    const before = this.fingerprint;
    const previous = this.tools;
    this.tools = tools;
    this.stale = false;
    this.fingerprint = toolsFingerprint(tools);
    if (before === undefined || before === this.fingerprint) return undefined;
    const was = new Set(previous.map((t) => t.name));
    const now = new Set(tools.map((t) => t.name));
    return {
      type: "tools-changed",
      serverId,
      before,
      after: this.fingerprint,
      tools: tools.length,
      added: tools.filter((t) => !was.has(t.name)).map((t) => t.name),
      removed: previous.filter((t) => !now.has(t.name)).map((t) => t.name),
    };
  }

  /** A list from a store, for a server not dialled: offered as stale. */
  adopt(tools: Tool[]): void {
    this.tools = tools;
    this.fingerprint = toolsFingerprint(tools);
    this.stale = tools.length > 0;
  }

  /** The server is down or idle: what it listed stays offered, marked stale. */
  keepAsLastKnown(): void {
    this.stale = this.tools.length > 0;
  }

  /** The list no longer speaks for the server (removed, reconfigured, signed out). */
  forget(): void {
    this.tools = [];
    this.fingerprint = undefined;
    this.stale = false;
  }

  /**
   * tools/list_changed: walks every page of `client`'s list within `budgetMs`, now or once
   * more after the walk in progress, never two at a time, while `live()` holds. A list that
   * arrives for a live connection goes to `apply`; a walk that fails leaves the list as it
   * was and is told to `failed`. A server that says its list changed during every walk is
   * told to `looping` once per run, at the {@link RELIST_LOOP_AFTER}th walk in a row.
   */
  relist(
    client: McpClient,
    budgetMs: number | undefined,
    live: () => boolean,
    apply: (tools: Tool[]) => void,
    failed: (error: Error) => void,
    looping?: (text: string) => void,
  ): void {
    if (this.#relisting) {
      this.#relistAgain = true;
      return;
    }
    const options = budgetMs === undefined ? {} : { timeout: budgetMs };
    this.#relisting = (async () => {
      let walks = 0;
      try {
        do {
          this.#relistAgain = false;
          if (++walks === RELIST_LOOP_AFTER) {
            looping?.(
              `sent tools/list_changed during each of ${RELIST_LOOP_AFTER} listings in a row; still re-listing, one walk at a time`,
            );
          }
          try {
            const tools = await listAllTools(client, options);
            if (live()) apply(tools);
          } catch (error) {
            failed(error as Error);
          }
        } while (this.#relistAgain && live());
      } finally {
        // In the same turn as the last check: a change told after it starts a walk of its own.
        this.#relisting = undefined;
      }
    })();
  }

  /** Resolves once any walk in progress has finished. */
  async settled(): Promise<void> {
    while (this.#relisting) await this.#relisting;
  }
}
