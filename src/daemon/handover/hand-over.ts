/**
 * The old daemon's hand-over, step by step (README.md): hold the socket and the fronts, let
 * the children settle and stop reading them, let go of the lock, start the new daemon with
 * the descriptors and the snapshot, stop listening (what arrives waits in the sockets' backlog
 * for the new daemon), and wait for its answer. Ready: the children are
 * released without a signal, the service manager is told the new main pid, and the caller
 * is answered; the daemon then stops without unlinking its socket. Not ready: everything is
 * taken back — the lock, the children's reading, the socket, the fronts — and why is said.
 */
import type { McpPool } from "../../pool/pool.js";
import {
  releaseHandedOff,
  releaseHandedSessions,
  resumeHandedOff,
  resumeHandedSessions,
  type HandedOff,
} from "../../pool/server/handoff.js";
import { McpPoolError } from "../../pool/core/errors.js";
import type { SocketServer } from "../socket/server.js";
import type { DaemonLog } from "../process/logger.js";
import {
  nameOf,
  renumbered,
  renumberedFronts,
  SNAPSHOT_VERSION,
  untakenLabels,
  type Answer,
  type HandedFront,
  type Snapshot,
} from "./snapshot.js";
import { startSuccessor } from "./successor.js";
import { handedSubscriptions, holdSubscriptions, unholdSubscriptions } from "./subscriptions.js";
import { tellMainPid } from "./service-manager.js";

/** Bound on each child's calls in flight settling before it is handed over, ms. */
export const DEFAULT_SETTLE_MS = 5_000;
/** Bound on the new daemon's answer, ms: its start, its reconcile, its adoptions. */
export const DEFAULT_ANSWER_MS = 60_000;

export interface HandOverDeps {
  /** Absent unless the daemon serves: then there is nothing to hand over. */
  pool?: McpPool | undefined;
  server?: SocketServer | undefined;
  log?: DaemonLog | undefined;
  /** Lets go of the instance lock, and takes it again when the hand-over fails. */
  lock: { release(): void; take(): Promise<boolean> };
  /** The fronts beside the daemon (the MCP sockets), whose listening sockets go along. */
  fronts?: HandedFronts | undefined;
  /** How to start the new daemon, given how many fds follow the control channel. */
  successor?: ((fdCount: number) => { command: string; args: string[] }) | undefined;
  from: Snapshot["from"];
  inherited: boolean;
  marks: string[];
  settleMs?: number;
  answerMs?: number;
}

/** The MCP sockets across a hand-over (src/bridge/fronts/mcp-sockets.ts). */
export interface HandedFronts {
  /** Accept nothing more and end their sessions; their listening sockets' fds by scope. */
  hold(): Promise<HandedFront[]>;
  /**
   * The new daemon was started with their listening sockets: stop listening here (their
   * paths stay), so what arrives waits in the backlog for the new daemon.
   */
  letGo(): void;
  /** The hand-over failed: accept again (or start again, if they could not be held). */
  resume(): Promise<void>;
  /** The hand-over went through: let go of all but the listening sockets, now the new daemon's. */
  release(): Promise<void>;
}

export interface HandedOver {
  pid: number;
  adopted: string[];
  /** The host profiles' children adopted besides (childName()). */
  children?: string[];
  /** Children whose row changed or went: the old daemon stops them. */
  untaken: string[];
  cold?: string;
}

/** Hands the daemon over, keeping the connection `keepId` (the caller's) open to answer it. */
export async function handOver(deps: HandOverDeps, keepId: number): Promise<HandedOver> {
  const { server, pool, log, successor: start } = deps;
  if (!server || !pool || !log || !start) {
    throw new McpPoolError(
      "handover-failed",
      "this daemon cannot hand over: it is not serving, or not under `mcpool serve`",
      {},
    );
  }
  const listenFd = server.listeningFd;
  if (listenFd === undefined) {
    throw new McpPoolError(
      "handover-failed",
      "the daemon's listening socket has no descriptor to hand over",
      {},
    );
  }
  log.info(`mcpool: handing over to a new daemon`);
  holdSubscriptions(pool);
  // Nor does a host that goes as its connection closes release its tasks: they all move.
  pool.holdTasks();
  server.hold(keepId);
  const fronts = (await deps.fronts?.hold().catch(() => undefined)) ?? [];
  // The task records first: a live task holds its connection as a call does, but it moves.
  const tasks = pool.handOffTasks();
  const handed = await pool.handOff(deps.settleMs ?? DEFAULT_SETTLE_MS);
  const sessions = await pool.handOffSessions(deps.settleMs ?? DEFAULT_SETTLE_MS);
  const servers = handed.map(({ serverId, row, child, profile, conversation }) => ({
    serverId,
    row,
    child,
    ...(profile ? { profile } : {}),
    ...(conversation ? { conversation } : {}),
  }));
  const snapshot: Snapshot = {
    version: SNAPSHOT_VERSION,
    from: deps.from,
    at: Date.now(),
    inherited: deps.inherited,
    marks: deps.marks,
    servers: renumbered(servers),
    fronts: renumberedFronts(fronts, servers.length),
    sessions: sessions.map(({ serverId, row, sessionId, session, listened, conversation }) => ({
      serverId,
      row,
      sessionId,
      session,
      ...(conversation ? { conversation } : {}),
      ...(listened ? { listened } : {}),
    })),
    tasks,
    subscriptions: handedSubscriptions(pool),
  };
  deps.lock.release();
  const { command, args } = start(1 + servers.length * 3 + fronts.length);
  const successor = startSuccessor({
    command,
    args,
    env: process.env,
    listenFd,
    servers,
    fronts,
    snapshot,
    answerMs: deps.answerMs ?? DEFAULT_ANSWER_MS,
  });
  // The sockets live on in the new daemon: connections wait in their backlog until it listens.
  server.letGo();
  deps.fronts?.letGo();
  log.info(
    `mcpool: the new daemon (pid ${successor.pid}) holds the sockets; this one no longer listens`,
  );
  const answer = await successor.answer;
  if (!answer.ready) {
    successor.go(false);
    await takeBack({ ...deps, server, log }, handed, answer);
    resumeHandedSessions(sessions);
    pool.resumeTasks();
    unholdSubscriptions(pool, log);
    throw new McpPoolError(
      "handover-failed",
      `the new daemon did not take over, so this one serves on: ${answer.why}`,
      { pid: answer.pid },
    );
  }
  const untaken = new Set(answer.cold !== undefined ? handed.map(nameOf) : answer.untaken);
  releaseHandedOff(handed.filter((h) => !untaken.has(nameOf(h))));
  // The new daemon goes on in them: this one's stop ends none (a conversation's is ended by a
  // DELETE otherwise). Started cold, it opened its own: these are ended as at any stop.
  if (answer.cold === undefined) releaseHandedSessions(sessions);
  // Read again so that this daemon's stop ends them as it ends any child.
  resumeHandedOff(handed.filter((h) => untaken.has(nameOf(h))));
  const unmanaged = tellMainPid(answer.pid);
  if (unmanaged)
    log.error(`mcpool: ${unmanaged}; the service manager may not track the new daemon`);
  // The new daemon starts its MCP sockets on this word: it waits on none of this one's ends.
  successor.go(true);
  await releaseFronts(deps.fronts, deps.settleMs ?? DEFAULT_SETTLE_MS, log);
  const children = answer.children ?? [];
  // A conversation's child is named by who is talking: never in a log line or the answer.
  const labels = untakenLabels(handed, untaken);
  log.info(
    `mcpool: handed over to pid ${answer.pid}: ${answer.adopted.length + children.length} children adopted` +
      (answer.cold !== undefined ? `; it started cold: ${answer.cold}` : "") +
      (untaken.size > 0 && answer.cold === undefined
        ? `; not taken (changed): ${labels.join(", ")}`
        : ""),
  );
  return {
    pid: answer.pid,
    adopted: answer.adopted,
    ...(children.length > 0 ? { children } : {}),
    untaken: labels,
    ...(answer.cold !== undefined ? { cold: answer.cold } : {}),
  };
}

/**
 * The MCP sockets' sessions and shared client end here, or are left to this process's exit
 * after `ms`: they serve nothing now, and the caller is answered either way.
 */
async function releaseFronts(
  fronts: HandedFronts | undefined,
  ms: number,
  log: DaemonLog,
): Promise<void> {
  if (fronts === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ms)));
  const ended = fronts.release().then(
    () => false,
    () => false,
  );
  if (await Promise.race([ended, late])) {
    log.error(`mcpool: the MCP sockets did not end within ${ms} ms; they end with this process`);
  }
  clearTimeout(timer);
}

/** The new daemon did not take over: this one takes everything back and serves on. */
async function takeBack(
  deps: HandOverDeps & { server: SocketServer; log: DaemonLog },
  handed: HandedOff[],
  answer: Answer,
): Promise<void> {
  const why = answer.ready ? "" : answer.why;
  deps.log.error(`mcpool: the hand-over failed, this daemon serves on: ${why}`);
  if (!(await deps.lock.take().catch(() => false))) {
    deps.log.error(
      "mcpool: could not take the instance lock back; a second daemon could start beside this one",
    );
  }
  resumeHandedOff(handed);
  await deps.server.unhold().catch((error: unknown) => {
    deps.log.error(`mcpool: could not listen on the socket again: ${(error as Error).message}`);
  });
  await deps.fronts?.resume().catch((error: unknown) => {
    deps.log.error(`mcpool: could not restart the MCP sockets: ${(error as Error).message}`);
  });
}
