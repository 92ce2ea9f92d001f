/**
 * Who a conversation client is for: the identity a caller names with
 * each call, the rules that refuse one (`no-identity`), and `keyHash`, the only trace of
 * an identity the pool lets out.
 *
 * An identity is the caller's word, verified at its own door: the pool never derives one
 * (a session id is not an authenticated principal). Identities are never logged nor put in
 * events; events carry `keyHash`, an HMAC under a key drawn per pool, so a digest cannot
 * be reversed by trying names, and means nothing outside the process that made it.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { ConversationIdentity, ConversationSelector } from "mcpool-protocol";
import { McpPoolError } from "./errors.js";

export type { ConversationIdentity, ConversationSelector } from "mcpool-protocol";

export interface IdentityRules {
  /** Refuse an identity without a principal. */
  requirePrincipal: boolean;
  /** Refuse an identity without a tenant. */
  requireTenant: boolean;
}

// An identity part is a name, not a payload: the bound keeps a hostile caller from making
// every key and every digest input megabytes long.
export const MAX_IDENTITY_PART_CHARS = 512;

/** Hex characters of a keyHash: 48 bits, unique enough to tell a pool's conversations apart. */
const KEY_HASH_CHARS = 12;

const PARTS = ["tenant", "principal", "conversationId"] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function refuse(message: string, serverId: string | undefined): McpPoolError {
  return new McpPoolError("no-identity", message, serverId !== undefined ? { serverId } : {});
}

/**
 * The identity a caller named, checked against a row's rules; throws `no-identity`.
 * The message names the missing part, never a value.
 */
export function checkIdentity(
  identity: unknown,
  rules: IdentityRules,
  serverId?: string,
): ConversationIdentity {
  const where = serverId !== undefined ? `server "${serverId}"` : "a per-conversation server";
  if (identity === undefined || identity === null) {
    throw refuse(
      `${where} keeps a client per conversation: name the conversation with an identity { tenant?, principal, conversationId }`,
      serverId,
    );
  }
  if (!isRecord(identity)) throw refuse(`the identity for ${where} must be an object`, serverId);
  for (const part of PARTS) {
    const value = identity[part];
    if (value === undefined) continue;
    if (typeof value !== "string") {
      throw refuse(`the identity's ${part} must be a string`, serverId);
    }
    if (value.length > MAX_IDENTITY_PART_CHARS) {
      throw refuse(
        `the identity's ${part} is longer than ${MAX_IDENTITY_PART_CHARS} characters`,
        serverId,
      );
    }
  }
  const { tenant, principal, conversationId } = identity as Partial<
    Record<(typeof PARTS)[number], string>
  >;
  if (conversationId === undefined || conversationId === "") {
    throw refuse(`the identity for ${where} names no conversationId`, serverId);
  }
  if (rules.requirePrincipal && (principal === undefined || principal === "")) {
    throw refuse(
      `${where} requires a principal in the identity (set conversation.requirePrincipal: false to allow none)`,
      serverId,
    );
  }
  if (rules.requireTenant && (tenant === undefined || tenant === "")) {
    throw refuse(`${where} requires a tenant in the identity`, serverId);
  }
  return {
    ...(tenant ? { tenant } : {}),
    ...(principal ? { principal } : {}),
    conversationId,
  };
}

/** The map key of one conversation: exact, unambiguous, never shown to anyone. */
export function conversationKey(identity: ConversationIdentity): string {
  return JSON.stringify([identity.tenant ?? "", identity.principal ?? "", identity.conversationId]);
}

/** The identity a conversation key was made from. */
export function identityOfKey(key: string): ConversationIdentity {
  const [tenant, principal, conversationId] = JSON.parse(key) as [string, string, string];
  return { tenant, principal, conversationId };
}

/** The key a per-principal budget counts under. */
export function principalKey(identity: ConversationIdentity): string {
  return JSON.stringify([identity.tenant ?? "", identity.principal ?? ""]);
}

/** Whether `identity` is one of the conversations `selector` names. */
export function selects(selector: ConversationSelector, identity: ConversationIdentity): boolean {
  if (selector.tenant !== undefined && (identity.tenant ?? "") !== selector.tenant) return false;
  if (selector.principal !== undefined && (identity.principal ?? "") !== selector.principal)
    return false;
  return (
    selector.conversationId === undefined || identity.conversationId === selector.conversationId
  );
}

/**
 * A selector checked as terminate() needs it: string parts only, and at least a principal or a
 * conversation, so an empty selector never ends every conversation of a pool.
 */
export function checkSelector(selector: unknown): ConversationSelector {
  if (!isRecord(selector)) throw refuse("name the conversations to end", undefined);
  const out: ConversationSelector = {};
  for (const part of PARTS) {
    const value = selector[part];
    if (value === undefined) continue;
    if (typeof value !== "string" || value.length > MAX_IDENTITY_PART_CHARS) {
      throw refuse(`the selector's ${part} must be a string`, undefined);
    }
    out[part] = value;
  }
  if (!out.principal && !out.conversationId) {
    throw refuse("name a principal or a conversationId: an empty selector ends nothing", undefined);
  }
  return out;
}

/** Digests identities under a key of its own, drawn when it is made. */
export class KeyHasher {
  readonly #key = randomBytes(32);

  /** A short digest of a conversation key: what events and reports carry instead. */
  hash(key: string): string {
    return createHmac("sha256", this.#key).update(key).digest("hex").slice(0, KEY_HASH_CHARS);
  }
}
