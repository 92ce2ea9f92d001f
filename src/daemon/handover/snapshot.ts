/**
 * What the old daemon hands the new one, besides the descriptors themselves: one JSON line on
 * the control channel. Its `version` is checked first; a version this code does not know is
 * not read further, and the new daemon starts cold and says so (README.md).
 *
 * The descriptors' numbers are the new process's: fd 3 is the control channel, fd 4 the
 * listening socket, then stdin, stdout and stderr of each child in `children` order.
 */
import type { McpServerConfig } from "../../config/rows.js";
import type { HandedChild } from "../../pool/mcp/transport.js";
import type { HandedProfile } from "../../pool/server/handoff.js";

/**
 * The snapshot's format; raised when its meaning changes, never reused. Version 2 adds the
 * host profiles' children (`profile`); a version 1 snapshot has none and is read as well.
 */
export const SNAPSHOT_VERSION = 2;
const READABLE: readonly unknown[] = [1, SNAPSHOT_VERSION];

/** The control channel's fd in the new process, and the listening socket's. */
export const CONTROL_FD = 3;
export const LISTEN_FD = 4;

export interface HandedServer {
  serverId: string;
  /** The row the old daemon dialled the child from: adopted only for the same row. */
  row: McpServerConfig;
  child: HandedChild;
  /** A host profile's child (its profile key and profile); absent: the row's own child. */
  profile?: HandedProfile;
}

/** How a handed child is named in answers and logs: its row, and for whom it was started. */
export function childName(server: { serverId: string; profile?: { key: string } }): string {
  return server.profile === undefined
    ? server.serverId
    : `${server.serverId} for ${server.profile.key}`;
}

export interface Snapshot {
  version: 1 | typeof SNAPSHOT_VERSION;
  /** The daemon that handed over, and when. */
  from: { pid: number; version: string; startedAt: number };
  at: number;
  /** The listening socket came from a service manager (systemd socket activation). */
  inherited: boolean;
  /** The marks of the old daemon's descendants (process/marked.ts): ended at shutdown too. */
  marks: string[];
  servers: HandedServer[];
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
      cold?: string;
    }
  | { ready: false; pid: number; why: string };

/** The fds of `servers` renumbered from fd 5 on, as the new process receives them. */
export function renumbered(servers: readonly HandedServer[]): HandedServer[] {
  return servers.map((server, index) => {
    const base = LISTEN_FD + 1 + index * 3;
    return { ...server, child: { ...server.child, fds: [base, base + 1, base + 2] } };
  });
}

/** The snapshot in `text`, or why it cannot be read. */
export function readSnapshot(text: string): { snapshot: Snapshot } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `the snapshot is not JSON (${(error as Error).message})` };
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
