/**
 * The row options of a per-conversation server: `session:
 * "conversation"` gives every identity `{tenant?, principal?, conversationId}` a client of
 * its own, and `conversation` bounds and shapes those clients. Only what a file can say
 * lives here; the pool reads it (src/pool/conversations/registry.ts) and supplies the defaults. The
 * types are the wire's, declared once in mcpool-protocol and re-exported here.
 *
 * Browser-safe: no `node:` imports, nothing from the SDK or the pool, and from
 * mcpool-protocol only types.
 */
import type { SessionMode } from "mcpool-protocol";
import { durationProblems } from "./durations.js";

export type { ConversationRowOptions, SessionMode, ShareNames } from "mcpool-protocol";

/** Whether a row serves each conversation from a client of its own. */
export function isConversationRow(row: { session?: SessionMode | undefined }): boolean {
  return row.session === "conversation";
}

const BUDGETS = ["maxClients", "maxClientsPerPrincipal", "maxEnding", "maxOperations"] as const;
/** Durations of `conversation`, with what 0 means (both: never). */
const DURATIONS = { idleMs: "never", definitionTtlMs: "never" };
const FLAGS = ["requirePrincipal", "requireTenant"] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What a value is, for a message; numbers, booleans and short strings as themselves. */
function show(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string") return value.length <= 40 ? JSON.stringify(value) : "a string";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Every problem with a row's `session` and `conversation` fields, one sentence each.
 * Unknown keys in `conversation` pass, as unknown row keys do (a newer version's options).
 */
export function validateSessionOptions(row: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const session = row.session;
  if (session !== undefined && session !== "shared" && session !== "conversation") {
    problems.push(`\`session\` must be "shared" or "conversation", got ${show(session)}`);
  }
  const options = row.conversation;
  if (options === undefined) return problems;
  if (!isRecord(options)) {
    problems.push(`\`conversation\` must be an object, got ${show(options)}`);
    return problems;
  }
  if (session !== "conversation") {
    problems.push('`conversation` applies only to a row with `session: "conversation"`');
  }
  for (const field of BUDGETS) {
    const value = options[field];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      problems.push(`\`conversation.${field}\` must be a whole number ≥ 1, got ${show(value)}`);
    }
  }
  problems.push(...durationProblems(DURATIONS, options, "conversation."));
  for (const field of FLAGS) {
    const value = options[field];
    if (value !== undefined && typeof value !== "boolean") {
      problems.push(`\`conversation.${field}\` must be true or false, got ${show(value)}`);
    }
  }
  if (options.share !== undefined) {
    const share = options.share;
    if (!isRecord(share)) {
      problems.push(`\`conversation.share\` must be an object, got ${show(share)}`);
    } else {
      for (const field of ["configuration", "authorization"] as const) {
        const value = share[field];
        if (typeof value !== "string" || value === "") {
          problems.push(`\`conversation.share.${field}\` must be a non-empty string`);
        }
      }
    }
  }
  return problems;
}
