/**
 * Server rows: what a configured MCP server is, as data.
 *
 * A row is a discriminated union on `transport`; each arm carries only its own fields. The
 * types are the wire's, declared once in mcpool-protocol (row-shapes.ts) and re-exported
 * here beside the functions that read a row. This module is browser-safe: it imports nothing
 * from Node or the MCP SDK, and from mcpool-protocol only types, which compile away.
 */
import type { ServerOptions, ServerRow } from "mcpool-protocol";

export type {
  HttpServerConfig,
  OAuthClientSettings,
  OAuthGrant,
  ProtocolPin,
  ServerOptions,
  StdioServerConfig,
} from "mcpool-protocol";

/** A server row, as configured (the wire's ServerRow). */
export type McpServerConfig = ServerRow;

export type Transport = McpServerConfig["transport"];

/** The slug a row's tools are qualified with: its own, else its id. */
export function slugOf(row: { id: string; slug?: string | undefined }): string {
  return row.slug !== undefined && row.slug !== "" ? row.slug : row.id;
}

/** The label a row is shown with: its own, else its id. */
export function labelOf(row: Pick<ServerOptions, "id" | "label">): string {
  return row.label !== undefined && row.label !== "" ? row.label : row.id;
}

/** Whether a row should ever be started. */
export function isEnabled(row: Pick<ServerOptions, "enabled">): boolean {
  return row.enabled !== false;
}

/**
 * A copy of a row without its secrets (`env`, `headers`, and in `auth` the client secret,
 * private key, ID token and IdP client secret).
 */
export function withoutSecrets(row: McpServerConfig): McpServerConfig {
  if (row.transport === "stdio") {
    const { env: _env, ...rest } = row;
    return rest;
  }
  const { headers: _headers, auth, ...rest } = row;
  if (typeof auth === "object") {
    const {
      clientSecret: _secret,
      privateKey: _key,
      idToken: _idToken,
      idpClientSecret: _idpSecret,
      ...client
    } = auth;
    return { ...rest, auth: client };
  }
  return auth === undefined ? rest : { ...rest, auth };
}
