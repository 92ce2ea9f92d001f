/**
 * The cause behind a failed fetch or dial. undici says only `fetch failed` and puts
 * what happened in `err.cause` (ECONNREFUSED, ENOTFOUND, a certificate's code…); Node's
 * happy-eyeballs connect puts one attempt per address in an AggregateError's `errors`. The
 * cause is found and classified by its `code`, never by message text, which differs between
 * Node versions and platforms.
 */

/** How deep a chain of `cause`s is followed: undici nests two, the SDK may add one. */
const MAX_DEPTH = 5;

/** A system or library error code (`ECONNREFUSED`, `UND_ERR_SOCKET`, `CERT_HAS_EXPIRED`). */
const ERROR_CODE = /^[A-Z][A-Z0-9_]+$/;

/** The first error code in `error`, its cause chain or an aggregate's errors; else undefined. */
export function causeCode(error: unknown, depth = 0): string | undefined {
  if (depth > MAX_DEPTH || typeof error !== "object" || error === null) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === "string" && ERROR_CODE.test(code)) return code;
  const fromCause = causeCode(cause, depth + 1);
  if (fromCause !== undefined) return fromCause;
  return Array.isArray(errors) ? causeCode(errors[0], depth + 1) : undefined;
}

/** Codes that mean the address answered nothing a session could be made on. */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  // OpenSSL's names for a certificate it refused; Node's own TLS codes are matched below.
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);

/** `CERT_HAS_EXPIRED`, `CERT_NOT_YET_VALID`…, `ERR_TLS_CERT_ALTNAME_INVALID`, `ERR_SSL_…`. */
const TLS_CODE = /^(?:CERT_|ERR_TLS_|ERR_SSL_)/;

/** Whether `code` says the address could not be reached (or would not speak TLS with us). */
export function isUnreachableCode(code: string | undefined): boolean {
  return code !== undefined && (UNREACHABLE_CODES.has(code) || TLS_CODE.test(code));
}

/** What a few common codes mean, for a person who has not met them. */
const MEANINGS: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused: nothing listens at that address",
  ECONNRESET: "the connection was reset",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved now",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "no route to the host",
  ENETUNREACH: "the network is unreachable",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
};

/** `message` with its cause named: `fetch failed (ECONNREFUSED: connection refused: …)`. */
export function withCause(message: string, code: string | undefined): string {
  if (code === undefined || message.includes(code)) return message;
  const meaning = MEANINGS[code] ?? (TLS_CODE.test(code) ? "the TLS certificate was refused" : "");
  return `${message} (${code}${meaning ? `: ${meaning}` : ""})`;
}
