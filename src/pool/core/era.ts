/**
 * The two eras of MCP: `legacy` (2024-10-07 … 2025-11-25: an `initialize`
 * handshake, a session) and `modern` (2026-07-28: no handshake, every request carries its
 * protocol version, client info and capabilities in `_meta`, the server answers
 * `server/discover`). What a server was found to speak is a verdict, kept dated with the
 * tools cache so a warm pool never asks twice. Pure: the shapes, the envelope, the plan a
 * connect follows and the error of a pin that does not match, and how an answer is read
 * as evidence of an era (the stdio and Streamable HTTP bindings' "Backward
 * Compatibility" sections; the SDK v2 client's probe classifier, for which errors count).
 */
import type { ClientCapabilities, Implementation } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, isMcpError } from "./mcp-error.js";

/** The modern revision this client speaks, and every modern revision it accepts. */
export const MODERN_PROTOCOL_VERSION = "2026-07-28";
export const SUPPORTED_MODERN_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION];

/** The reserved `_meta` keys of the per-request envelope (2026-07-28 basic/index, `_meta`). */
export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
} as const;

/** `UnsupportedProtocolVersionError`: the server does not speak the version a request named. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export type Era = "legacy" | "modern";

/** A row's `protocol`: found per server (`auto`, the default), or pinned to one era. */
export type ProtocolPin = "auto" | "legacy" | typeof MODERN_PROTOCOL_VERSION;

/** What a modern server says of itself in answer to `server/discover`. */
export interface DiscoverResult {
  supportedVersions: string[];
  capabilities?: Record<string, unknown>;
  instructions?: string;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * What a server was found to speak, and when (epoch ms). A modern verdict keeps the
 * server's advertisement, so a connect on it sends nothing before the first real request.
 */
export type EraVerdict =
  | { era: "modern"; version: string; discover: DiscoverResult; at: number }
  | { era: "legacy"; at: number };

/**
 * How long a legacy verdict is believed, ms: a server upgraded to the modern era still
 * answers `initialize`, so only its age ever retires one (the SDK's gateway guide). A
 * modern verdict's era is not aged: a stale one fails loudly on its first request, and is
 * re-found then; its kept `server/discover` answer is (discoverFresh).
 */
export const LEGACY_VERDICT_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * Whether a modern verdict's kept `server/discover` answer may be adopted without asking
 * again (SEP-2549): for as long as the answer's own `ttlMs` says, when that is positive,
 * and never past LEGACY_VERDICT_MAX_AGE_MS. `ttlMs: 0` (SDK v2's default) promises no
 * lifetime; asking at every dial would be the probe the verdict exists to spare, so such an
 * answer is held to the pool's own horizon — an upgraded server's new capabilities are then
 * learnt within a day, or at once when a request fails on the old verdict. Asking again is
 * a modern request to the serving connection, at the known version: no spare child, no
 * `initialize`.
 */
export function discoverFresh(
  verdict: { discover: DiscoverResult; at: number },
  now: number,
  maxAgeMs = LEGACY_VERDICT_MAX_AGE_MS,
): boolean {
  const ttl = verdict.discover.ttlMs;
  const lifetime = typeof ttl === "number" && ttl > 0 ? Math.min(ttl, maxAgeMs) : maxAgeMs;
  return now - verdict.at < lifetime;
}

/** The per-request envelope: who asks, in which revision, able to do what. */
export interface Envelope {
  protocolVersion: string;
  clientInfo: Implementation;
  clientCapabilities: ClientCapabilities;
  logLevel?: string | undefined;
}

/** `_meta` of a modern request: the envelope's keys over what the request carried already. */
export function envelopeMeta(
  envelope: Envelope,
  meta: Record<string, unknown> | undefined,
): Record<string, unknown> {
  return {
    ...meta,
    [META.protocolVersion]: envelope.protocolVersion,
    [META.clientInfo]: envelope.clientInfo,
    [META.clientCapabilities]: envelope.clientCapabilities,
    ...(envelope.logLevel !== undefined ? { [META.logLevel]: envelope.logLevel } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `result` as a DiscoverResult, or undefined when it is not one. */
export function asDiscoverResult(result: unknown): DiscoverResult | undefined {
  if (!isObject(result) || !Array.isArray(result.supportedVersions)) return undefined;
  if (!result.supportedVersions.every((v) => typeof v === "string")) return undefined;
  return result as DiscoverResult;
}

/** The first modern version both sides speak, if any. */
export function mutualModernVersion(supported: readonly unknown[]): string | undefined {
  return SUPPORTED_MODERN_VERSIONS.find((version) => supported.includes(version));
}

/** Whether `version` names a modern revision (2026-07-28 or later). */
export function isModernVersion(version: string): boolean {
  return version >= MODERN_PROTOCOL_VERSION;
}

/**
 * The versions an `UnsupportedProtocolVersionError` says the server speaks, or undefined
 * when `error` is not one (or names none): only with that list is it modern evidence.
 */
export function supportedVersionsOf(error: {
  code?: unknown;
  data?: unknown;
}): string[] | undefined {
  if (error.code !== UNSUPPORTED_PROTOCOL_VERSION || !isObject(error.data)) return undefined;
  const supported = error.data.supported;
  if (!Array.isArray(supported) || !supported.every((v) => typeof v === "string")) return undefined;
  return supported.length > 0 ? supported : undefined;
}

/**
 * Whether a refusal of a legacy `initialize` says the server is modern-only: -32022 with a
 * modern revision among those it supports (SDK v2's `legacy: 'reject'` answers exactly so).
 */
export function refusedAsModernOnly(error: { code?: unknown; data?: unknown }): boolean {
  return (supportedVersionsOf(error) ?? []).some(isModernVersion);
}

/** The modern version a verdict adopts, when it is a modern one that is still believed. */
export function usableVerdict(
  verdict: EraVerdict | undefined,
  now: number,
  maxLegacyAgeMs = LEGACY_VERDICT_MAX_AGE_MS,
): EraVerdict | undefined {
  if (verdict === undefined) return undefined;
  if (verdict.era === "modern") {
    return mutualModernVersion(verdict.discover.supportedVersions) ? verdict : undefined;
  }
  return now - verdict.at < maxLegacyAgeMs ? verdict : undefined;
}

/** A verdict read back from a store, or undefined when it is not one. */
export function parseVerdict(value: unknown): EraVerdict | undefined {
  if (!isObject(value) || typeof value.at !== "number") return undefined;
  if (value.era === "legacy") return { era: "legacy", at: value.at };
  const discover = asDiscoverResult(value.discover);
  if (value.era !== "modern" || typeof value.version !== "string" || !discover) return undefined;
  return { era: "modern", version: value.version, discover, at: value.at };
}

/** How each era is named to a person: both eras named, so a mismatch says what each side speaks. */
export const ERA_NAMES: Readonly<Record<Era, string>> = {
  legacy: "the legacy era (initialize; 2025-11-25 and earlier)",
  modern: `the modern era (${MODERN_PROTOCOL_VERSION}; server/discover, no initialize)`,
};

/** A pinned row's server speaks the other era: what failed, why, and the fix. */
export function pinMismatchMessage(serverId: string, pin: Era, speaks: Era): string {
  const fix = speaks === "modern" ? `"${MODERN_PROTOCOL_VERSION}"` : '"legacy"';
  return (
    `server "${serverId}" is pinned to ${ERA_NAMES[pin]} but speaks ${ERA_NAMES[speaks]}; ` +
    `set "protocol": ${fix} (or "auto") in its row`
  );
}

/**
 * How connect() finds the server's era. Without one, connect() is the legacy
 * handshake alone, as the SDK's Client does by default.
 */
export interface EraPlan {
  /** The row's `protocol`: `auto` finds the era, the others pin one. */
  pin: ProtocolPin;
  /** A verdict still believed (era.ts usableVerdict): a modern one sends nothing to connect. */
  prior: EraVerdict | undefined;
  /**
   * Without a prior, whether `server/discover` goes first. Over HTTP a request costs
   * nothing but a round trip; a stdio child may exit on any request before `initialize`,
   * so there the handshake goes first and a modern-only server names itself by refusing it.
   */
  discoverFirst: boolean;
}

/** The server speaks the other era than the row's pin says (era.ts pinMismatchMessage). */
export class EraMismatchError extends Error {
  constructor(
    readonly pin: Era,
    readonly speaks: Era,
  ) {
    super(`pinned to ${pin}, the server speaks ${speaks}`);
  }
}

/**
 * What a failed `server/discover` says (the SDK v2 client's probe classifier):
 * a -32022 naming a modern version both speak is asked again at it (even the one it
 * refused: SEP-2575's client retries once with a version the rejection names, and the
 * caller bounds the attempts); any other JSON-RPC
 * error, or an HTTP 4xx (`status`) the modern binding would not send, is a legacy server;
 * a closed connection, a timeout, 5xx or a sign-in wanted is an outage, no evidence of an era.
 */
export function probeFailure(
  error: unknown,
  status: number | undefined,
): "legacy" | "outage" | { retryAt: string } {
  if (isMcpError(error)) {
    if (error.code === ErrorCode.ConnectionClosed || error.code === ErrorCode.RequestTimeout) {
      return "outage";
    }
    const supported = supportedVersionsOf(error);
    const mutual = supported ? mutualModernVersion(supported) : undefined;
    return mutual !== undefined ? { retryAt: mutual } : "legacy";
  }
  const refused = status !== undefined && status >= 400 && status < 500;
  return refused && status !== 401 && status !== 403 ? "legacy" : "outage";
}
