/**
 * What the old daemon hands the new one, besides the descriptors themselves: one JSON line on
 * the control channel. Its `version` is checked first; a version this code does not know is
 * not read further, and the new daemon starts cold and says so (README.md).
 *
 * The descriptors' numbers are the new process's: fd 3 is the control channel, fd 4 the
 * listening socket, then stdin, stdout and stderr of each child in `children` order, then
 * the MCP sockets' listening sockets in `fronts` order.
 */
import type { McpServerConfig } from "../../config/rows.js";
import type { MovedTask } from "../../pool/calls/moved-records.js";
import type { HandedChild, HandedHttpSession } from "../../pool/transport/transport.js";
import type { HandedConversation, HandedProfile } from "../../pool/server/handoff.js";
import { conversationHandedKey } from "../../pool/transport/transport.js";
import type { HandedSubscription } from "../../pool/calls/server-passthrough.js";

/**
 * The snapshot's format; raised when its meaning changes, never reused. Version 2 adds the
 * host profiles' and conversations' children (`profile`, `conversation`); a version 1
 * snapshot has none and is read as well. Version 3: `sessions` may hold a conversation's
 * session beside its row's own. A build that reads 2 keys `sessions` by row alone and would
 * take a conversation's session as the row's shared one, so it must start cold instead; a
 * version 2 snapshot holds only rows' own sessions and is read as well.
 */
export const SNAPSHOT_VERSION = 3;
const READABLE: readonly unknown[] = [1, 2, SNAPSHOT_VERSION];

/** The control channel's fd in the new process, and the listening socket's. */
export const CONTROL_FD = 3;
export const LISTEN_FD = 4;

export interface HandedServer {
  serverId: string;
  /** The row the old daemon dialled the child from: adopted only for the same row. */
  row: McpServerConfig;
  child: HandedChild;
  /** A host profile's child (its profile key and profile). */
  profile?: HandedProfile;
  /** A conversation's child (its conversation key). Neither: the row's own child. */
  conversation?: HandedConversation;
}

/** The key a handed child goes by beside its row: its profile's, its conversation's, or none. */
export function handedKey(
  server: Pick<HandedServer, "profile" | "conversation">,
): string | undefined {
  if (server.profile !== undefined) return server.profile.key;
  if (server.conversation !== undefined) return conversationHandedKey(server.conversation.key);
  return undefined;
}

/** What a handed child is matched by: its row's id, and its key (handedKey()) if it has one. */
export function childName(serverId: string, key?: string): string {
  return key === undefined ? serverId : `${serverId} for ${key}`;
}

/** childName() of a handed child. */
export function nameOf(
  server: Pick<HandedServer, "serverId" | "profile" | "conversation">,
): string {
  return childName(server.serverId, handedKey(server));
}

/**
 * How an adopted child is told in answers, `status` and logs: a profile's by its key; a
 * conversation's without its key, which names who is talking (events use its hash).
 */
export function childLabel(
  server: Pick<HandedServer, "serverId" | "profile" | "conversation">,
): string {
  if (server.conversation !== undefined) return `${server.serverId} for a conversation`;
  return nameOf(server);
}

/**
 * The children of `handed` the new daemon did not take (`untaken`: their nameOf()), told as
 * childLabel() tells them: the names match the two daemons' lists, the labels are for people.
 */
export function untakenLabels(
  handed: readonly Pick<HandedServer, "serverId" | "profile" | "conversation">[],
  untaken: ReadonlySet<string>,
): string[] {
  return handed.filter((server) => untaken.has(nameOf(server))).map(childLabel);
}

export interface Snapshot {
  version: 1 | 2 | typeof SNAPSHOT_VERSION;
  /**
   * The daemon that handed over, and when; since when the pool serves without a cold start
   * and across how many hand-overs before this one (absent in version 1: since its start, none).
   */
  from: {
    pid: number;
    version: string;
    startedAt: number;
    servingSince?: number;
    handovers?: number;
  };
  at: number;
  /** The listening socket came from a service manager (systemd socket activation). */
  inherited: boolean;
  /** The marks of the old daemon's descendants (process/marked.ts): ended at shutdown too. */
  marks: string[];
  servers: HandedServer[];
  /**
   * The MCP sockets' listening sockets, fd by scope (a server id, "" for the pool's): after
   * the children's fds. Absent (version 1): the new daemon binds them again.
   */
  fronts?: HandedFront[];
  /**
   * The live http sessions, a row's own, each host profile's and each conversation's: the new
   * daemon's dial of the same row (for the same profile or conversation) goes on in each
   * instead of initializing again.
   * Absent (older snapshots): they are dialled again.
   */
  sessions?: HandedHttpRow[];
  /**
   * The pool's task records on the children handed over (moved-tasks.ts). Absent (older
   * snapshots): a host's older tasks are unknown to the new daemon.
   */
  tasks?: MovedTask[];
  /**
   * The pool's live upstream resource subscriptions, with how many listeners each had, the
   * names of their hosts where they had one, and the update read for them while they were
   * away, if any (subscriptions.ts). Absent (older snapshots): the entries subscribe again
   * anew. An older build that reads this version passes over `missed` and loses only that
   * update, as it would have anyway, and over `names`, keeping places of no name as it
   * always did: no new version. This build always writes `names` (an empty list when no
   * host had one); a subscription without it is an older build's, whose places the first
   * listener back takes, named or not.
   */
  subscriptions?: HandedSubscription[];
}

/**
 * A live http session: the row as the old daemon dialled it, the session, and for a host
 * profile's session its profile (key, profile, era and what its server showed of its roots),
 * for a conversation's its conversation (neither: the row's own). Matched by nameOf(). A
 * build that knows no profile sessions takes one only by a dial of that profile's child,
 * whose key names it: it needs no new version.
 */
interface HandedHttpRow extends HandedHttpSession {
  serverId: string;
  row: McpServerConfig;
  profile?: HandedProfile;
  conversation?: HandedConversation;
}

/** One listening socket beside the daemon's: its scope and its fd. */
export interface HandedFront {
  scope: string;
  fd: number;
}

/** How the new daemon answers, once started: what it took, or why it could not. */
export type Answer =
  | {
      ready: true;
      pid: number;
      /** The rows whose own child was taken, by id. */
      adopted: string[];
      /** The host profiles' children taken, by childName(). */
      children?: string[];
      /** The children not taken, by childName(): the old daemon stops them. */
      untaken: string[];
      /**
       * The http sessions not taken, by childName(): the old daemon ends them as at any stop.
       * Absent (an older new daemon): every session counts as taken.
       */
      untakenSessions?: string[];
      cold?: string;
    }
  | { ready: false; pid: number; why: string };

/** The fds of `fronts` renumbered after `serverCount` children's, as the new process receives them. */
export function renumberedFronts(
  fronts: readonly HandedFront[],
  serverCount: number,
): HandedFront[] {
  return fronts.map((front, index) => ({ ...front, fd: LISTEN_FD + 1 + serverCount * 3 + index }));
}

/** The fds of `servers` renumbered from fd 5 on, as the new process receives them. */
export function renumbered(servers: readonly HandedServer[]): HandedServer[] {
  return servers.map((server, index) => {
    const base = LISTEN_FD + 1 + index * 3;
    return { ...server, child: { ...server.child, fds: [base, base + 1, base + 2] } };
  });
}

/**
 * Where `text` stopped being JSON, told by position alone: the parser's own message quotes a
 * stretch of the text, and a snapshot holds the rows' env and headers (secrets, often).
 */
function whereNotJson(text: string, error: Error): string {
  const position = /at position (\d+)/.exec(error.message)?.[1];
  if (position !== undefined) return `at character ${position} of ${text.length}`;
  if (/end of JSON input/.test(error.message)) return `it ends early, at character ${text.length}`;
  return `somewhere in its ${text.length} characters`;
}

/** The snapshot in `text`, or why it cannot be read. */
export function readSnapshot(text: string): { snapshot: Snapshot } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `the snapshot is not JSON (${whereNotJson(text, error as Error)})` };
  }
  const object = value as Partial<Snapshot> | null;
  if (typeof object !== "object" || object === null || Array.isArray(object)) {
    return { problem: "the snapshot is not a JSON object" };
  }
  if (!READABLE.includes(object.version)) {
    return {
      problem: `the snapshot's version ${JSON.stringify(object.version)} is not one this mcpool reads (${READABLE.join(", ")})`,
    };
  }
  if (!Array.isArray(object.servers) || !Array.isArray(object.marks) || !object.from) {
    return { problem: "the snapshot lacks its servers, marks or origin" };
  }
  return { snapshot: object as Snapshot };
}
