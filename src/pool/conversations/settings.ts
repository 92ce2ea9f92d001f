/**
 * The budgets and identity rules of one `session: "conversation"` row, read from
 * the row with their defaults: what the registry refuses by, sweeps by, and checks
 * identities against.
 */
import type { McpServerConfig } from "../../config/rows.js";
import type { IdentityRules } from "../core/identity.js";

/** Open clients per row when the row does not say: a child or session each, so few. */
export const DEFAULT_MAX_CLIENTS = 8;
/** Endings in progress per row: each is a DELETE (or a child's stop) that may be slow. */
export const DEFAULT_MAX_ENDING = 4;
/** Calls, listings and endings outstanding per row. */
export const DEFAULT_MAX_OPERATIONS = 64;
/** A client unused this long is ended at the next use of its row, ms (10 min). */
export const DEFAULT_CONVERSATION_IDLE_MS = 600_000;

export interface RowSettings {
  maxClients: number;
  maxClientsPerPrincipal: number;
  maxEnding: number;
  maxOperations: number;
  idleMs: number;
  definitionTtlMs: number;
  rules: IdentityRules;
}

export function settingsOf(row: McpServerConfig): RowSettings {
  const options = row.conversation ?? {};
  const maxClients = options.maxClients ?? DEFAULT_MAX_CLIENTS;
  return {
    maxClients,
    maxClientsPerPrincipal: Math.min(options.maxClientsPerPrincipal ?? maxClients, maxClients),
    maxEnding: options.maxEnding ?? DEFAULT_MAX_ENDING,
    maxOperations: options.maxOperations ?? DEFAULT_MAX_OPERATIONS,
    idleMs: options.idleMs ?? DEFAULT_CONVERSATION_IDLE_MS,
    definitionTtlMs: options.definitionTtlMs ?? 0,
    rules: {
      requirePrincipal: options.requirePrincipal ?? true,
      requireTenant: options.requireTenant ?? false,
    },
  };
}
