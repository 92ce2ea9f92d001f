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
  endUntakenSessions,
  releaseHandedOff,
  releaseHandedSessions,
  resumeHandedOff,
  resumeHandedSessions,
  type HandedHttpOff,
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
  type HandedFront,
  type Snapshot,
} from "./snapshot.js";
import { startSuccessor, type Successor } from "./successor.js";
import { UNCLAIMED_TASK_HOLD_MS } from "./moved-tasks.js";
import { handedSubscriptions, holdSubscriptions, unholdSubscriptions } from "./subscriptions.js";
import { tellMainPid } from "./service-manager.js";

/** Bound on each child's calls in flight settling before it is handed over, ms. */
export const DEFAULT_SETTLE_MS = 5_000;
/** Bound on the new daemon's answer, ms: its start, its reconcile, its adoptions. */
export const DEFAULT_ANSWER_MS = 60_000;

/**
 * The bound on the new daemon's answer: `MCPOOL_HANDOVER_ANSWER_MS` in the daemon's
 * environment when set (a whole number of ms, 1 or more), else DEFAULT_ANSWER_MS.
 */
export function answerBoundMs(env: NodeJS.ProcessEnv): number {
  const value = env.MCPOOL_HANDOVER_ANSWER_MS;
  if (value === undefined) return DEFAULT_ANSWER_MS;
  if (/^\d+$/.test(value) && Number(value) >= 1) return Number(value);
  throw new McpPoolError(
    "handover-failed",
    `MCPOOL_HANDOVER_ANSWER_MS must be a whole number of ms, 1 or more, not "${value}"; nothing was handed over`,
    {},
  );
}
/**
 * Bound on a new daemon that was told to let go exiting by itself, ms: past it, it is killed.
 * Until it has exited it may still read the handed children's output and write to their input.
 */
export const DEFAULT_EXIT_MS = 10_000;

export interface HandOverDeps {
  /** Absent unless the daemon serves: then there is nothing to hand over. */
  pool?: McpPool | undefined;
  server?: SocketServer | undefined;
  log?: DaemonLog | undefined;
  /** Lets go of the instance lock, and takes it again when the hand-over fails. */
  lock: { release(): void; take(): Promise<boolean> };
  /**
   * The hand-over failed and the socket cannot be listened on again: stops the daemon as a
   * daemon stops (children stopped, record removed), with a non-zero exit and `why`.
   */
  stop?: ((why: string) => void) | undefined;
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

/** The parts of a daemon that serves, and how to start the new one. */
type Serving = HandOverDeps & {
  server: SocketServer;
  pool: McpPool;
  log: DaemonLog;
  successor: NonNullable<HandOverDeps["successor"]>;
};

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
  // One turn of the reconcile queue, start to end: an edit of the configuration meanwhile
  // (or a reload) neither stops nor restarts a child being handed. It waits, and runs once
  // this daemon serves again; a hand-over that went through leaves it to the new daemon.
  const answerMs = deps.answerMs ?? answerBoundMs(process.env);
  return pool.handingOver(() =>
    handOverHeld({ ...deps, server, pool, log, successor: start, answerMs }, keepId, listenFd),
  );
}

/** handOver() within its turn of the reconcile queue. */
async function handOverHeld(deps: Serving, keepId: number, listenFd: number): Promise<HandedOver> {
  const { log } = deps;
  log.info(`mcpool: handing over to a new daemon`);
  // What has been held so far, for taking it back if a step below fails.
  const held: Held = { handed: [], sessions: [], released: false };
  let successor: Successor;
  try {
    successor = await hold(deps, keepId, listenFd, held);
  } catch (error) {
    const why = `the hand-over could not start: ${(error as Error).message}`;
    const lost = await takeBack(deps, held, why);
    const after = lost === undefined ? "this daemon serves on" : `${lost}, so this daemon stops`;
    throw new McpPoolError("handover-failed", `${why}; ${after}`, {});
  }
  const { handed, sessions } = held;
  const answer = await successor.answer;
  if (!answer.ready) {
    // The answer that calls it off may come before the launcher named the new daemon.
    const pid = await successor.pid;
    log.error(
      `mcpool: the hand-over is called off (${answer.why}); pid ${pid ?? "none: it could not start"} is told to let go`,
    );
    // Heard at once, even mid-adoption: the new daemon lets go of every child and exits.
    successor.go(false, answer.why);
    // Only one daemon may drive the children: this one takes them back once the new one is gone.
    await ended(successor, log);
    const lost = await takeBack(deps, held, answer.why);
    const after = lost === undefined ? "so this one serves on" : `and this one stops (${lost})`;
    throw new McpPoolError(
      "handover-failed",
      `the new daemon did not take over, ${after}: ${answer.why}`,
      pid === undefined ? {} : { pid },
    );
  }
  const untaken = new Set(answer.cold !== undefined ? handed.map(nameOf) : answer.untaken);
  releaseHandedOff(handed.filter((h) => !untaken.has(nameOf(h))));
  // The new daemon goes on in those it took: this one's stop ends none of them (a
  // conversation's is ended by a DELETE otherwise). Those it did not take (their row changed
  // or went), or all when it started cold, are ended as at any stop: their children, and a
  // conversation's http session by its DELETE; a row's own session, which a stop leaves to the
  // server's timeout, by its DELETE below, since no daemon goes on in it.
  const untakenSessions = new Set(answer.untakenSessions ?? []);
  const notTaken = (s: HandedHttpOff): boolean =>
    answer.cold !== undefined || untakenSessions.has(nameOf(s));
  if (answer.cold === undefined) releaseHandedSessions(sessions.filter((s) => !notTaken(s)));
  // Read again so that this daemon's stop ends them as it ends any child.
  resumeHandedOff(handed.filter((h) => untaken.has(nameOf(h))));
  // Named once its launcher has exited: the new daemon is then the service manager's child
  // (it is the subreaper), which systemd waits for at a stop as for any process it started.
  await successor.detach();
  const unmanaged = tellMainPid(answer.pid);
  if (unmanaged)
    log.error(`mcpool: ${unmanaged}; the service manager may not track the new daemon`);
  // The new daemon starts its MCP sockets on this word: it waits on none of this one's ends.
  successor.go(true);
  const settleMs = deps.settleMs ?? DEFAULT_SETTLE_MS;
  await Promise.all([
    releaseFronts(deps.fronts, settleMs, log),
    endUntaken(sessions.filter(notTaken), settleMs, log),
  ]);
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
 * Waits for a new daemon told to let go to exit; one that has not within DEFAULT_EXIT_MS
 * (stuck in a dial, or not listening to its channel) is killed. Its children lead their own
 * groups, so a kill of it stops none of them.
 */
async function ended(successor: Successor, log: DaemonLog): Promise<void> {
  const pid = await successor.pid;
  if (pid === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), DEFAULT_EXIT_MS);
  });
  const killed = await Promise.race([successor.exited.then(() => false), late]);
  clearTimeout(timer);
  if (!killed) return;
  log.error(`mcpool: the new daemon (pid ${pid}) did not exit when told to; killing it`);
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone meanwhile: its exit is on its way.
  }
  await successor.exited;
}

/** What the hold took so far: taken back if the hand-over fails. */
interface Held {
  handed: HandedOff[];
  sessions: HandedHttpOff[];
  /** The instance lock was let go. */
  released: boolean;
}

/**
 * Holds the socket, the fronts, the tasks and the children, lets go of the lock and starts the
 * new daemon with the snapshot; then stops listening. Records in `held` what it took, as it goes.
 */
async function hold(
  deps: Serving,
  keepId: number,
  listenFd: number,
  held: Held,
): Promise<Successor> {
  const { server, pool, log } = deps;
  holdSubscriptions(pool);
  // Nor does a host that goes as its connection closes release its tasks: they all move.
  pool.holdTasks();
  server.hold(keepId);
  const fronts = (await deps.fronts?.hold().catch(() => undefined)) ?? [];
  // The task records first: a live task holds its connection as a call does, but it moves.
  const tasks = pool.handOffTasks();
  held.handed = await pool.handOff(deps.settleMs ?? DEFAULT_SETTLE_MS);
  held.sessions = await pool.handOffSessions(deps.settleMs ?? DEFAULT_SETTLE_MS);
  const servers = held.handed.map(({ serverId, row, child, profile, conversation }) => ({
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
    sessions: held.sessions.map(
      ({ serverId, row, sessionId, session, listened, profile, conversation }) => ({
        serverId,
        row,
        sessionId,
        session,
        ...(profile ? { profile } : {}),
        ...(conversation ? { conversation } : {}),
        ...(listened ? { listened } : {}),
      }),
    ),
    tasks,
    subscriptions: handedSubscriptions(pool),
  };
  const { command, args } = deps.successor(1 + servers.length * 3 + fronts.length);
  deps.lock.release();
  held.released = true;
  const successor = startSuccessor({
    command,
    args,
    env: process.env,
    listenFd,
    servers,
    fronts,
    snapshot,
    answerMs: deps.answerMs ?? answerBoundMs(process.env),
  });
  // Refused at once (no process): nobody holds the sockets but this daemon, which keeps
  // listening and takes everything back on the answer that says why.
  if (!successor.started) return successor;
  // The sockets live on in the new daemon: connections wait in their backlog until it listens.
  server.letGo();
  deps.fronts?.letGo();
  // Said once its launcher names it; the hand-over waits on the answer, not on this line.
  void successor.pid.then((pid) =>
    log.info(
      `mcpool: the new daemon (pid ${pid ?? "none: it could not start"}) holds the sockets; this one no longer listens`,
    ),
  );
  return successor;
}

/** Ends by its DELETE each row's own http session no daemon goes on in, saying how it went. */
async function endUntaken(sessions: HandedHttpOff[], ms: number, log: DaemonLog): Promise<void> {
  for (const { serverId, end } of await endUntakenSessions(sessions, ms)) {
    const status = end.status === undefined ? "" : ` (HTTP ${end.status})`;
    log.info(
      `mcpool: ${serverId}'s http session, not taken by the new daemon: ${end.outcome}${status}`,
    );
  }
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

/**
 * The hand-over failed: this one takes everything back and serves on. The pool first (its
 * children, sessions, tasks and subscriptions), so that a host that comes back finds it as it
 * was; then the socket and the fronts accept again. A socket that cannot be listened on
 * again (unhold() tries a few times) leaves a daemon that would serve no one: it stops as a
 * daemon stops instead (`deps.stop`), so an entry or the service manager starts a fresh one.
 * Says why it stops, if it does.
 */
async function takeBack(
  deps: HandOverDeps & { server: SocketServer; pool: McpPool; log: DaemonLog },
  held: Held,
  why: string,
): Promise<string | undefined> {
  if (held.released && !(await deps.lock.take().catch(() => false))) {
    deps.log.error(
      "mcpool: could not take the instance lock back; a second daemon could start beside this one",
    );
  }
  resumeHandedOff(held.handed);
  resumeHandedSessions(held.sessions);
  deps.pool.resumeTasks(UNCLAIMED_TASK_HOLD_MS);
  unholdSubscriptions(deps.pool);
  const lost = await deps.server.unhold().then(
    () => undefined,
    (error: unknown) => `it could not listen on its socket again: ${(error as Error).message}`,
  );
  if (lost !== undefined) {
    deps.log.error(`mcpool: the hand-over failed (${why}) and ${lost}; this daemon stops`);
    deps.stop?.(lost);
    return lost;
  }
  deps.log.error(`mcpool: the hand-over failed, this daemon serves on: ${why}`);
  await deps.fronts?.resume().catch((error: unknown) => {
    deps.log.error(`mcpool: could not restart the MCP sockets: ${(error as Error).message}`);
  });
  return undefined;
}
