/**
 * The tools cache's contract: a store where last-known tool lists outlive the
 * process, keyed per row by a hash of the connection it was listed over. The hash covers
 * env and headers, so a list from before a row was pointed elsewhere is never offered, and
 * the store never holds a secret, only its digest. Beside the list it keeps the era the
 * server was found to speak and what host profiles taught, so a
 * restart does not find them out again. A list its server calls `private` is not kept.
 */
import { createHash } from "node:crypto";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../../config/rows.js";
import { canonicalJson } from "../core/fingerprint.js";
import type { EraVerdict } from "../core/era.js";
import type { ServerFace } from "mcpool-protocol";

export interface CachedTools {
  /** connectionHash() of the row the list was fetched over. */
  connection: string;
  tools: Tool[];
  /**
   * The server said its list is `private` (a 2026-07-28 cache hint): `tools` is
   * then empty, and nothing is offered from the store until the server lists again.
   */
  private?: true;
  /** The era the server was found to speak over that connection, dated. */
  era?: EraVerdict;
  /** What the server was found to do with host profiles over that connection. */
  profiles?: ProfileMemo;
}

/** What host profiles taught about a row (host-profiles.ts), kept so it is learnt once. */
export interface ProfileMemo {
  /** Capability keys whose listing is the row's own: served by its own connection. */
  same?: string[];
  /**
   * Whether the server asks its client for roots: true once seen to ask (at any time);
   * false once a child served a use without it asking, at its start or since.
   */
  asksRoots?: boolean;
  /**
   * The server, once it asked for roots, was seen to show it took them in (a stderr line, a
   * notification or a request of its own; pool/server/sign-of-life.ts). Only seen, never
   * guessed: a server that said nothing within its bound is not kept as quiet.
   */
  showsUptake?: true;
  /**
   * Whether the server, held in 2026-07-28, also speaks 2025-11-25 to a child of a legacy
   * host's: false once it refused such a child's `initialize` (its legacy hosts then share
   * the row's modern connection).
   */
  legacyToo?: boolean;
  /**
   * What the server, held in 2026-07-28, declares in 2025-11-25: a legacy host's child's
   * handshake (its serverInfo, capabilities, instructions), told to legacy hosts.
   */
  legacyFace?: ServerFace;
  /**
   * The questions the server was seen to ask its client (`sampling`, `elicitation:form`,
   * `elicitation:url`; profile-facts.ts): hosts lacking one never share the row's connection.
   */
  asks?: Question[];
}

/** A question a server asks its client in the 2025-11-25 era. */
export type Question = "sampling" | "elicitation:form" | "elicitation:url";

const QUESTIONS: readonly Question[] = ["sampling", "elicitation:form", "elicitation:url"];

/** Whether `value` names a question (a stored memo's check). */
export function isQuestion(value: unknown): value is Question {
  return QUESTIONS.includes(value as Question);
}

export interface ToolsCacheStore {
  /** Asked once per row registered without dialling. */
  load(id: string): CachedTools | undefined | Promise<CachedTools | undefined>;
  /** Handed every list the store does not already hold; never awaited by a connect. */
  save(id: string, cached: CachedTools): void | Promise<void>;
}

/** A digest of exactly the fields sameConnection() compares, absent and empty alike. */
export function connectionHash(row: McpServerConfig): string {
  const fields =
    row.transport === "stdio"
      ? {
          transport: "stdio",
          command: row.command,
          args: row.args ?? [],
          env: row.env ?? {},
          cwd: row.cwd ?? "",
        }
      : { transport: "http", url: row.url, headers: row.headers ?? {} };
  // Only a pin is hashed: rows that never set one keep the digest they had before it existed.
  const protocol = row.protocol ?? "auto";
  if (protocol !== "auto") Object.assign(fields, { protocol });
  return createHash("sha256").update(canonicalJson(fields)).digest("hex");
}
