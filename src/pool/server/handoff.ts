/**
 * Handing a pool's live stdio children to another daemon (src/daemon/handover/README.md):
 * each connection waits, bounded, for its calls in flight, then its transport stops reading
 * and says what the successor needs (stdio-transport.ts `handOff()`). The successor took them:
 * release() lets go without a signal. It did not: resume() reads them again.
 */
import type { HostProfile } from "mcpool-protocol";
import type { McpServerConfig } from "../../config/rows.js";
import type {
  HandedChild,
  HandedHttpSession,
  HandedSession,
  HandedUptake,
} from "../transport/transport.js";
import { processOf } from "../transport/transport.js";
import {
  DeleteWatch,
  deleteSession,
  sessionHandleOf,
  type SessionEnd,
} from "../transport/session-end.js";
import { drained, type Connection } from "./connection.js";
import { holdListening, listenAgain } from "../transport/http-client.js";
import type { EntryState } from "./state.js";

/**
 * A host profile's child (host-profiles.ts): the profile it was dialled for, under its key,
 * and what its server showed of its roots, so the successor serves it as this pool did.
 */
export interface HandedProfile extends HandedUptake {
  key: string;
  profile: HostProfile;
  /** A legacy host's child of a row held in 2026-07-28 (ProfileEntry's `era`). */
  era?: "legacy";
}

/** A host profile's child the successor takes up: its row's id and what it was handed. */
export interface AdoptedProfile extends HandedProfile {
  serverId: string;
}

/** A conversation's child (conversations/): its conversation, by the registry's key. */
export interface HandedConversation {
  key: string;
}

/** A conversation's child the successor takes up: its row's id and its conversation's key. */
export interface AdoptedConversation extends HandedConversation {
  serverId: string;
}

/** A conversation's child taken up: the pid its conversation's client opened on. */
export interface OpenedConversation extends AdoptedConversation {
  pid: number;
}

/**
 * An entry whose child may be handed off: `profile` for a host profile's child,
 * `conversation` for a conversation's, neither for a row's own.
 */
export interface Handable {
  entry: EntryState;
  profile?: HandedProfile;
  conversation?: HandedConversation;
}

/** One child handed off: its row as the pool dialled it, and what goes to the successor. */
export interface HandedOff {
  serverId: string;
  row: McpServerConfig;
  child: HandedChild;
  profile?: HandedProfile;
  conversation?: HandedConversation;
  readonly connection: Connection;
}

/** Hands off every entry's live stdio child, each once its calls settle (within `drainMs`). */
export async function handOff(entries: readonly Handable[], drainMs: number): Promise<HandedOff[]> {
  const live = entries.filter(({ entry }) => entry.connection !== undefined);
  await Promise.all(live.map(({ entry }) => drained(entry.connection as Connection, drainMs)));
  const handed: HandedOff[] = [];
  for (const { entry, profile, conversation } of live) {
    const connection = entry.connection;
    const transport = connection ? processOf(connection.transport) : undefined;
    const session = connection && sessionOf(connection);
    if (!connection || !transport || !session) continue;
    const child = transport.handOff(session);
    if (!child) continue;
    const serverId = entry.id;
    handed.push({
      serverId,
      row: entry.row,
      child,
      connection,
      ...(profile ? { profile } : {}),
      ...(conversation ? { conversation } : {}),
    });
  }
  return handed;
}

/**
 * An http session handed off: its row as the pool dialled it, the session, and for a host
 * profile's session its profile, for a conversation's (conversations/) its conversation;
 * neither: the row's own.
 */
export interface HandedHttpOff extends HandedHttpSession {
  serverId: string;
  row: McpServerConfig;
  profile?: HandedProfile;
  conversation?: HandedConversation;
  readonly connection: Connection;
}

/**
 * What the successor needs to go on in each live http session — a row's own, a host
 * profile's, a conversation's — (its id and what the handshake or discover told), once its calls settle
 * (within `drainMs`). Its GET stream is closed, so that the successor can open its own
 * (ListenStream, fetch.ts); nothing else is stopped: this pool's connection stays as it is
 * until the pool closes, which ends no session once releaseHandedSessions() marked it.
 */
export async function handOffSessions(
  entries: readonly Handable[],
  drainMs: number,
): Promise<HandedHttpOff[]> {
  const live = entries.filter(({ entry: { connection } }) => {
    const sessionId = connection ? sessionHandleOf(connection.transport)?.sessionId : undefined;
    return sessionId !== undefined;
  });
  await Promise.all(live.map(({ entry }) => drained(entry.connection as Connection, drainMs)));
  const handed: HandedHttpOff[] = [];
  for (const { entry, profile, conversation } of live) {
    const connection = entry.connection;
    const sessionId = connection ? sessionHandleOf(connection.transport)?.sessionId : undefined;
    const session = connection && sessionOf(connection);
    if (!connection || sessionId === undefined || session === undefined) continue;
    const listened = await holdListening(connection.transport);
    handed.push({
      serverId: entry.id,
      row: entry.row,
      sessionId,
      session,
      connection,
      ...(profile ? { profile } : {}),
      ...(conversation ? { conversation } : {}),
      ...(listened ? { listened } : {}),
    });
  }
  return handed;
}

/** The successor went on in them: this pool's end of each sends no DELETE. */
export function releaseHandedSessions(handed: readonly HandedHttpOff[]): void {
  for (const { connection } of handed) connection.handedAway = true;
}

/**
 * Ends each of `handed` — a row's own sessions the successor went on without (their row
 * changed or went, or it started cold) — by its DELETE, as a client that no longer needs a
 * session should (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management),
 * each within `timeoutMs`, so the server frees it now rather than at its own timeout. A
 * conversation's is left out: its client's stop ends it (conversations/client.ts `endRemote`).
 * Never rejects.
 */
export async function endUntakenSessions(
  handed: readonly HandedHttpOff[],
  timeoutMs: number,
): Promise<{ serverId: string; end: SessionEnd }[]> {
  const own = handed.filter(({ conversation }) => conversation === undefined);
  return Promise.all(
    own.map(async ({ serverId, connection }) => {
      const handle = sessionHandleOf(connection.transport);
      const end: SessionEnd = handle
        ? await deleteSession(handle, new DeleteWatch(), timeoutMs)
        : { outcome: "handle-lost" };
      return { serverId, end };
    }),
  );
}

/** The successor did not take them: each session listens on its GET stream here again. */
export function resumeHandedSessions(handed: readonly HandedHttpOff[]): void {
  for (const { connection, listened } of handed) {
    listenAgain(connection.transport, listened === true);
  }
}

/** What the successor goes on with in `connection`'s session, with since when it serves. */
function sessionOf(connection: Connection): HandedSession | undefined {
  const session = connection.client.handedSession();
  return session && { ...session, startedAt: connection.startedAt };
}

/** The successor has them: this pool forgets each child without signalling it. */
export function releaseHandedOff(handed: readonly HandedOff[]): void {
  for (const { connection } of handed) {
    connection.closing = true;
    processOf(connection.transport)?.release();
  }
}

/**
 * The successor did not take them: this pool reads each child again, its request ids past
 * any the successor could have used in the child's session (McpClient.skipHandedIds()).
 */
export function resumeHandedOff(handed: readonly HandedOff[]): void {
  for (const { connection } of handed) {
    connection.client.skipHandedIds();
    processOf(connection.transport)?.resume();
  }
}
