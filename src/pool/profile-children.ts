/**
 * What HostProfiles (host-profiles.ts) does over a set of its children: dial the ones a
 * listing needs that never listed, tell their state for `status`, name a profile in the log,
 * whether a legacy host's child speaks the legacy era, and what its server declares there.
 */
import {
  capabilityKey,
  type HostProfile,
  type ProfileChildState,
  type ServerFace,
  type ServerRow,
  type ServerState,
} from "mcpool-protocol";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Handable } from "./server/handoff.js";
import { isConversationRow } from "../config/conversation.js";
import { isEnabled } from "../config/rows.js";
import { sameConnection } from "../config/same-connection.js";
import { serverLog } from "./core/server-log.js";
import type { PoolLog } from "./core/types.js";
import { DEFAULT_MAX_CONCURRENT_STARTS } from "./reconcile/reconciler.js";
import type { CallRoutes } from "./calls/routes.js";
import type { EntryContext } from "./server/context.js";
import type { ServerEntry } from "./server/entry.js";
import { elicitationQuestion, type ProfileFacts, type Question } from "./profile-facts.js";
import { isProfileEntry, type ProfileEntry } from "./server/profile-entry.js";

/**
 * Dials each child among `entries()` (in `servers`, when given) that has never listed, a few
 * at a time; one that fails is left out, said in the log, and its failure is not kept: a
 * later use dials afresh (the project may have changed since). Twice at most: a legacy child that
 * its server refused hands its row to another child (host-profiles.ts), dialled in turn.
 */
export async function dialFresh(
  entries: () => readonly ServerEntry[],
  servers: readonly string[] | undefined,
  log: PoolLog,
): Promise<void> {
  const scope = servers ? new Set(servers) : undefined;
  const tried = new Set<ProfileEntry>();
  for (let pass = 0; pass < 2; pass += 1) {
    const fresh = entries().filter(
      (entry): entry is ProfileEntry =>
        isProfileEntry(entry) &&
        !tried.has(entry) &&
        (!scope || scope.has(entry.id)) &&
        entry.fingerprint === undefined &&
        !entry.connection,
    );
    if (fresh.length === 0) return;
    for (const child of fresh) tried.add(child);
    // As a reconcile starts rows: a few at a time, not a whole pool's children at once.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < fresh.length) {
        const child = fresh[next++] as ProfileEntry;
        await child.ensure().then(
          () => child.idle(),
          (error: Error) => serverLog(log, child.id).error(error.message),
        );
      }
    };
    const workers = Math.min(DEFAULT_MAX_CONCURRENT_STARTS, fresh.length);
    await Promise.all(Array.from({ length: workers }, worker));
  }
}

/**
 * The children that are up or starting, for state() (per-project children), then those opened
 * `ahead` (prepared-children.ts); undefined: none.
 */
export function childStates(
  children: Iterable<ProfileEntry>,
  ahead: readonly ProfileChildState[],
): ProfileChildState[] | undefined {
  const live = [...children].filter((child) => child.connection !== undefined || child.connecting);
  if (live.length + ahead.length === 0) return undefined;
  const states = live.map((child) => {
    const state: ProfileChildState = {
      capabilities: capabilityKey(child.profile),
      status: child.status,
    };
    if (child.profile.roots !== undefined && child.key !== capabilityKey(child.profile)) {
      state.roots = child.profile.roots.map((root) => root.uri);
    }
    const connection = child.connection;
    if (connection?.pid !== undefined) state.pid = connection.pid;
    if (connection !== undefined) state.startedAt = connection.startedAt;
    if (child.asksRoots) state.asksRoots = true;
    return state;
  });
  return [...states, ...ahead];
}

/** A profile as the log names it: its capability key, and its roots when it declares some. */
export function describeProfile(profile: HostProfile): string {
  const caps = capabilityKey(profile);
  if (profile.roots === undefined) return caps;
  const roots = profile.roots.map((root) => root.uri).join(" ");
  return `${caps} (${roots || "no roots"})`;
}

/**
 * Whether a legacy host is served on `entry`'s row by a child in the legacy era: the row is
 * held in 2026-07-28 (found, not pinned) and its server is not among `modernOnly` (those that
 * refused a legacy child's `initialize`).
 */
export function servedInLegacy(
  entry: ServerEntry,
  profile: HostProfile,
  modernOnly: ReadonlySet<string>,
): boolean {
  return profile.era === "legacy" && legacyApart(entry, modernOnly);
}

/** Whether `entry`'s row serves its legacy hosts by children in the legacy era (servedInLegacy). */
export function legacyApart(entry: ServerEntry, modernOnly: ReadonlySet<string>): boolean {
  return (
    !isConversationRow(entry.row) &&
    isEnabled(entry.row) &&
    entry.verdict?.era === "modern" &&
    (entry.row.protocol ?? "auto") === "auto" &&
    !modernOnly.has(entry.id)
  );
}

/** What a legacy child's handshake told of its server (the connection it is up on). */
export function faceOf(child: ServerEntry): ServerFace | undefined {
  const connection = child.connection;
  if (connection?.capabilities === undefined) return undefined;
  const face: ServerFace = { capabilities: structuredClone(connection.capabilities) };
  const info = connection.serverInfo;
  if (typeof info?.name === "string" && typeof info.version === "string") {
    face.serverInfo = structuredClone(info) as ServerFace["serverInfo"] & object;
  }
  if (connection.instructions !== undefined) face.instructions = connection.instructions;
  return face;
}

/** ServerState.legacyFace of a row whose legacy hosts have children in that era: `face` if known. */
export function legacyFaceState(face: ServerFace | undefined): ServerState["legacyFace"] {
  return face === undefined ? { known: false } : { known: true, ...structuredClone(face) };
}

/** What `profile` can be served as in a pool declaring `pool`: what it cannot route is left out. */
export function maskedProfile(profile: HostProfile, pool: ClientCapabilities): HostProfile {
  const masked: HostProfile = {};
  if (profile.sampling === true && pool.sampling !== undefined) masked.sampling = true;
  if (pool.elicitation !== undefined && (profile.elicitation ?? []).length > 0) {
    masked.elicitation = profile.elicitation ?? [];
  }
  // The pool routes nothing for an extension: the server offers, the host renders.
  if (profile.extensions !== undefined) masked.extensions = profile.extensions;
  if (profile.roots !== undefined) masked.roots = profile.roots;
  if (profile.era === "legacy") masked.era = "legacy";
  return masked;
}

/**
 * The children another daemon may take over: each serving (its server took its roots in),
 * with its profile and what its server showed, so the successor serves it as this one.
 */
export function handableChildren(children: Iterable<ProfileEntry>): Handable[] {
  return [...children]
    .filter((child) => child.ready)
    .map((child) => ({
      entry: child,
      profile: {
        key: child.key,
        profile: child.profile,
        asksRoots: child.asksRoots,
        ...(child.era !== undefined ? { era: child.era } : {}),
        ...(child.atStart !== undefined ? { atStart: child.atStart } : {}),
      },
    }));
}

/**
 * The questions a child may pass on to its hosts: only what its profile declared (the SDK
 * refuses the rest, -32601), each told to `asked` first (the row is seen to ask it).
 */
export function hostQuestions(
  profile: HostProfile,
  routes: CallRoutes,
  route: Parameters<CallRoutes["elicit"]>[0],
  asked: (question: Question) => void,
): Pick<EntryContext, "elicit" | "sample"> {
  const questions: Pick<EntryContext, "elicit" | "sample"> = {};
  if ((profile.elicitation ?? []).length > 0) {
    questions.elicit = (_id, params, signal) => {
      asked(elicitationQuestion(params));
      return routes.elicit(route, params, signal);
    };
  }
  if (profile.sampling === true) {
    questions.sample = (_id, params, signal) => {
      asked("sampling");
      return routes.sample(route, params, signal);
    };
  }
  return questions;
}

/**
 * The children after a reconcile (row id → profile key → child), against the rows now: a
 * removed row's, or one whose connection changed, are taken out and ended (the promises
 * returned); an edit that keeps the connection is taken as the row's own is.
 */
export function syncChildren(
  children: Map<string, Map<string, ProfileEntry>>,
  rows: ReadonlyMap<string, ServerRow>,
): Promise<void>[] {
  const ending: Promise<void>[] = [];
  for (const [id, ofRow] of children) {
    const row = rows.get(id);
    for (const [key, child] of ofRow) {
      if (row === child.row) continue;
      if (row !== undefined && isEnabled(row) && sameConnection(row, child.row)) {
        child.update(row);
        continue;
      }
      ofRow.delete(key);
      ending.push(child.remove("removed"));
    }
    if (ofRow.size === 0) children.delete(id);
  }
  return ending;
}

/**
 * Whether `child` serves its hosts on, rather than its row's own connection (`own`): its
 * server asks for roots, lacks an answer its hosts have, lists privately, is served in the
 * other era, lists otherwise than its row, or its hosts hold subscriptions on it.
 */
export function keepsOwnChild(
  child: ProfileEntry,
  own: ServerEntry | undefined,
  facts: ProfileFacts,
  subscribed: boolean,
): boolean {
  const fingerprint = own?.fingerprint;
  return (
    subscribed ||
    child.asksRoots ||
    facts.asksRoots(child.id) ||
    facts.lacks(child.id, capabilityKey(child.profile)) ||
    own?.cacheScope === "private" ||
    child.cacheScope === "private" ||
    child.era !== undefined ||
    fingerprint === undefined ||
    fingerprint !== child.fingerprint
  );
}

/**
 * What `child` reads and tells of its server's uptake of roots, kept in `facts`: learnt once
 * and kept (`learnt`: the tools cache keeps it too), a server seen to show its uptake is
 * never taken for quiet.
 */
export function learnsUptake(child: ProfileEntry, facts: ProfileFacts, learnt: () => void): void {
  child.knownQuiet = () => facts.quiet(child.id);
  child.knownToShow = () => facts.shows(child.id);
  child.onQuiet = () => facts.wentQuiet(child.id);
  child.onShown = () => {
    if (facts.shown(child.id)) learnt();
  };
}
