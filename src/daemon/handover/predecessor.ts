/**
 * The new daemon's side of a hand-over: the snapshot read from the control channel, the
 * children it names offered to the pool's dials (matched by row), the answer sent back, and
 * the old daemon's word awaited. Until that word, what the new daemon took is provisional:
 * a handed child is let go without a signal if the old daemon keeps serving (`owned`). The
 * word is heard whenever it comes: an old daemon that gave up before this one answered (its
 * wait for the answer ran out) calls the hand-over off, and the adoption stops at once.
 */
import { closeSync } from "node:fs";
import { Socket } from "node:net";
import { LineSplitter } from "mcpool-protocol";
import type { McpServerConfig } from "../../config/rows.js";
import { McpPoolError } from "../../pool/core/errors.js";
import type {
  HandedChild,
  HandedChildren,
  HandedHttpSession,
} from "../../pool/transport/transport.js";
import {
  childName,
  CONTROL_FD,
  handedKey,
  nameOf,
  LISTEN_FD,
  readSnapshot,
  type Answer,
  type HandedServer,
  type Snapshot,
} from "./snapshot.js";

const MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface Predecessor {
  /** The listening socket, whatever the snapshot says. */
  readonly listenFd: number;
  /** The MCP sockets' listening sockets, fd by scope: none when the snapshot had none. */
  readonly fronts: ReadonlyMap<string, number>;
  /** The snapshot; undefined when it could not be read (`problem` says why: start cold). */
  readonly snapshot: Snapshot | undefined;
  readonly problem: string | undefined;
  /** For the pool's dials. */
  readonly handed: HandedChildren;
  /** The children a dial took. */
  taken(): HandedServer[];
  /** The http sessions a dial took, by nameOf(). */
  takenSessions(): string[];
  /** The http sessions no dial took, by nameOf(): the old daemon ends them as at any stop. */
  untakenSessions(): string[];
  /** The host profiles' and conversations' children, to be taken up after the first reconcile. */
  besides(): HandedServer[];
  /** Closes this process's fds of the children no dial took (by nameOf()): the old daemon stops those. */
  closeUntaken(): string[];
  /** Answers the old daemon; resolves with its word: serve on (true) or let go (false). */
  answer(answer: Answer): Promise<boolean>;
  /**
   * Aborted, with why, when the old daemon calls the hand-over off before this one answered:
   * it serves on. By then every handed child is let go (its fds closed, no signal sent) and
   * no dial takes one.
   */
  readonly calledOff: AbortSignal;
}

/** The old daemon's word: serve on, or let go (and why, when it gave up before an answer). */
interface Word {
  go: boolean;
  why?: string;
}

/** A line of the old daemon's as its word; anything else is "let go". */
function wordOf(line: string): Word {
  try {
    const { go, why } = JSON.parse(line) as { go?: unknown; why?: unknown };
    return { go: go === true, ...(typeof why === "string" ? { why } : {}) };
  } catch {
    return { go: false };
  }
}

/** A row as text whose keys are sorted: two parses of one entry give the same text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : 1)))
      : inner,
  );
}

/** Reads the old daemon's snapshot from fd 3; `fdCount` fds from fd 4 on were passed. */
export async function joinPredecessor(fdCount: number): Promise<Predecessor> {
  const channel = new Socket({ fd: CONTROL_FD, readable: true, writable: true });
  channel.on("error", () => undefined);
  const lines = new LineSplitter(MAX_LINE_BYTES);
  const received: Promise<string>[] = [];
  const waiting: ((line: string) => void)[] = [];
  const next = (): Promise<string> =>
    received.shift() ?? new Promise((resolve) => waiting.push(resolve));
  const deliver = (line: string): void => {
    const taker = waiting.shift();
    if (taker) taker(line);
    else received.push(Promise.resolve(line));
  };
  channel.on("data", (chunk: Buffer) => {
    for (const line of lines.push(chunk)) {
      deliver(line instanceof Uint8Array ? Buffer.from(line).toString("utf8") : "");
    }
  });
  // The channel's end before a word is the old daemon gone: serve on.
  channel.on("end", () => deliver('{"go":true}'));
  channel.on("close", () => deliver('{"go":true}'));

  const read = readSnapshot(await next());
  const snapshot = "snapshot" in read ? read.snapshot : undefined;
  const problem = "problem" in read ? read.problem : undefined;
  if (snapshot === undefined) {
    // Nothing to adopt: what came with it is the old daemon's to stop.
    for (let fd = LISTEN_FD + 1; fd < LISTEN_FD + fdCount; fd++) closeQuietly(fd);
  }
  let settle: (serve: boolean) => void = () => undefined;
  const word = new Promise<boolean>((resolve) => (settle = resolve));
  // The line after the snapshot is the old daemon's word, whenever it comes.
  const said = next().then(wordOf);
  const off = new AbortController();
  let answered = false;
  // Each child by its name: the row's own by the row's id, another by id and key.
  const servers = new Map((snapshot?.servers ?? []).map((server) => [nameOf(server), server]));
  const taken = new Set<string>();
  // Closed once: a number closed twice may name another file by then.
  const closed = new Set<string>();
  const closeUntaken = (): string[] => {
    const left = [...servers.values()].filter((server) => !taken.has(nameOf(server)));
    for (const server of left.filter((one) => !closed.has(nameOf(one)))) {
      closed.add(nameOf(server));
      for (const fd of server.child.fds) closeQuietly(fd);
    }
    return left.map(nameOf);
  };
  // Called off before this daemon answered: what a dial took is let go as `word` settles
  // false, what none took is closed now, and no dial takes anything from here on.
  void said.then(({ go, why }) => {
    if (answered || go) return;
    // Said first (the adoption logs why), then done: the children let go of, no dial taking one.
    off.abort(new Error(why ?? "the old daemon called the hand-over off"));
    closeUntaken();
    settle(false);
  });
  const matching = (row: McpServerConfig, key?: string): HandedServer | undefined => {
    const name = childName(row.id, key);
    const server = servers.get(name);
    // A legacy host's child of a row held in 2026-07-28 was dialled with its era in the row
    // (ProfileEntry's dialled row): matched on the row as its dial gives it.
    if (server === undefined || taken.has(name)) return undefined;
    const era = server.profile?.era;
    const dialled = era === undefined ? server.row : { ...server.row, protocol: era };
    return canonical(dialled) === canonical(row) ? server : undefined;
  };

  // Each http session by its name (a row's own by the row's id, a profile's or a
  // conversation's by id and key), taken once by a dial of the same row for the same key.
  const sessions = new Map((snapshot?.sessions ?? []).map((handed) => [nameOf(handed), handed]));
  const takenSessions: string[] = [];
  const takeSession = (row: McpServerConfig, key?: string): HandedHttpSession | undefined => {
    const name = childName(row.id, key);
    const handed = sessions.get(name);
    // A legacy host's session on a row held in 2026-07-28 was dialled with its era in the row.
    const era = handed?.profile?.era;
    const dialled = era === undefined ? handed?.row : { ...handed?.row, protocol: era };
    if (!handed || canonical(dialled as McpServerConfig) !== canonical(row)) return undefined;
    sessions.delete(name);
    takenSessions.push(name);
    // A profile's facts go with its session, as with a child: its dial may come first.
    const { sessionId, session, listened, profile: uptake } = handed;
    return {
      sessionId,
      session,
      ...(listened ? { listened } : {}),
      owned: word,
      ...(uptake ? { uptake } : {}),
    };
  };

  return {
    listenFd: LISTEN_FD,
    fronts: new Map((snapshot?.fronts ?? []).map((front) => [front.scope, front.fd])),
    snapshot,
    problem,
    handed: {
      has: (row, key) => matching(row, key) !== undefined,
      take(row, key): HandedChild | undefined {
        const server = matching(row, key);
        if (!server) return undefined;
        if (off.signal.aborted) {
          // Its fds are closed: the old daemon serves it on. A dial must not start another.
          // (Thrown, not undefined: undefined would have the dial spawn a child of its own.)
          throw new McpPoolError(
            "handover-failed",
            `the old daemon called the hand-over off and serves "${row.id}" on`,
            { serverId: row.id },
          );
        }
        taken.add(nameOf(server));
        // A profile child's facts go with it: its dial may come before the adoption does.
        const uptake = server.profile;
        return { ...server.child, owned: word, ...(uptake ? { uptake } : {}) };
      },
      takeSession,
    },
    taken: () => [...servers.values()].filter((server) => taken.has(nameOf(server))),
    takenSessions: () => [...takenSessions],
    untakenSessions: () => [...sessions.keys()],
    besides: () => [...servers.values()].filter((server) => handedKey(server) !== undefined),
    closeUntaken,
    async answer(answer) {
      if (off.signal.aborted) return false;
      answered = true;
      channel.write(`${JSON.stringify(answer)}\n`);
      const serve = (await said).go && answer.ready;
      settle(serve);
      channel.end();
      return serve;
    },
    calledOff: off.signal,
  };
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Not open: nothing was passed there.
  }
}
