/**
 * Who a request is for, beyond the pool: the calling agent's own client info and
 * the log level it asked for. A modern (2026-07-28) server reads both in the request's
 * `_meta` envelope (`io.modelcontextprotocol/clientInfo`, `…/logLevel`); a legacy server
 * read the pool's client info at `initialize` and never sees these. The daemon checks a
 * caller (callerProblem) before anything is sent: a bad one is the request's -32602.
 */
import type { LoggingLevel } from "./mcp-shapes.js";
import { isRecord } from "./values.js";

/** An MCP `Implementation`: name and version, and whatever else the agent says of itself. */
export interface CallerInfo {
  name: string;
  version: string;
  title?: string;
  [key: string]: unknown;
}

export interface Caller {
  /** The calling agent's clientInfo; absent: the pool's own. */
  clientInfo?: CallerInfo;
  /** The level the agent asked for; absent: the request asks for no log messages. */
  logLevel?: LoggingLevel;
  /**
   * The agent declared `roots.listChanged`: a modern server is told so in the request's
   * capabilities, as it would be direct. Absent: it did not (or declared no roots).
   */
  rootsListChanged?: boolean;
}

/**
 * The longest clientInfo a request may carry, as JSON characters. Every request to a
 * modern server carries it again; a real agent's (name, version, title, a website, an
 * icon by URL) is a few hundred characters.
 */
export const MAX_CLIENT_INFO_CHARS = 4096;

/** The MCP log levels, lowest severity first (RFC 5424). */
export const LOGGING_LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** What is wrong with `value` as a request's `caller`, or undefined when it is one. */
export function callerProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) return `"caller" must be an object`;
  const { clientInfo, logLevel, rootsListChanged } = value;
  if (logLevel !== undefined && !LOGGING_LEVELS.includes(logLevel as LoggingLevel)) {
    return `"caller.logLevel" must be one of ${LOGGING_LEVELS.join(", ")}`;
  }
  if (rootsListChanged !== undefined && typeof rootsListChanged !== "boolean") {
    return `"caller.rootsListChanged" must be true or false`;
  }
  if (clientInfo === undefined) return undefined;
  if (!isRecord(clientInfo)) return `"caller.clientInfo" must be an object`;
  if (typeof clientInfo.name !== "string" || typeof clientInfo.version !== "string") {
    return `"caller.clientInfo" must have a string "name" and "version"`;
  }
  if (clientInfo.title !== undefined && typeof clientInfo.title !== "string") {
    return `"caller.clientInfo.title" must be a string`;
  }
  const chars = JSON.stringify(clientInfo).length;
  if (chars > MAX_CLIENT_INFO_CHARS) {
    return `"caller.clientInfo" is ${chars} characters as JSON; at most ${MAX_CLIENT_INFO_CHARS}`;
  }
  return undefined;
}

/** A caller's severity check: whether a message at `level` reaches one that asked for `threshold`. */
export function passesLevel(level: unknown, threshold: LoggingLevel | undefined): boolean {
  if (threshold === undefined) return true;
  const at = LOGGING_LEVELS.indexOf(level as LoggingLevel);
  return at === -1 || at >= LOGGING_LEVELS.indexOf(threshold);
}
