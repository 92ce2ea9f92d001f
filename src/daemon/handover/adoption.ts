/**
 * The new daemon's conclusion of a hand-over: once its first reconcile is done, every
 * handed child whose row is still configured has been dialled over its fds (a lazy row's is
 * dialled now, as is each http row whose session was handed, and each conversation's client
 * whose child or session was); each must be serving, with the same pid, or the hand-over
 * fails and the old daemon serves on. Then the old daemon is answered and its word awaited.
 * An old daemon that calls the hand-over off before it was answered (it gave up waiting)
 * ends the adoption at once: the handed children are let go of, whatever dial is under way.
 */
import type { HandoverInfo } from "mcpool-protocol";
import type { McpPool } from "../../pool/pool.js";
import type { DaemonLog } from "../process/logger.js";
import type { Predecessor } from "./predecessor.js";
import { takenTasks, UNCLAIMED_TASK_HOLD_MS } from "./moved-tasks.js";
import { childLabel, childName, handedKey, nameOf, type HandedServer } from "./snapshot.js";
import { adoptSubscriptions } from "./subscriptions.js";
import { subscriptionPlace } from "../../pool/calls/subscriptions.js";

export type Conclusion = { serve: true; info: HandoverInfo } | { serve: false; why: string };

export async function concludeAdoption(
  pool: McpPool,
  predecessor: Predecessor,
  log: DaemonLog,
): Promise<Conclusion> {
  try {
    return await Promise.race([
      conclude(pool, predecessor, log),
      calledOff(pool, predecessor, log),
    ]);
  } catch (error) {
    // A host's request that waits for its moved task records is told why none was taken up
    // (once they are, this changes nothing).
    const why = error instanceof Error ? error.message : String(error);
    pool.forgoTasks(`the adoption failed: ${why}`);
    throw error;
  }
}

/** Resolves once the old daemon called the hand-over off: this daemon serves nothing. */
function calledOff(pool: McpPool, predecessor: Predecessor, log: DaemonLog): Promise<Conclusion> {
  const signal = predecessor.calledOff;
  return new Promise((resolve) => {
    const off = (): void => {
      const why = `the old daemon called the hand-over off and serves on: ${(signal.reason as Error).message}`;
      log.error(`mcpool: ${why}; every child it handed is let go of, none signalled`);
      pool.forgoTasks(why);
      resolve({ serve: false, why });
    };
    if (signal.aborted) off();
    else signal.addEventListener("abort", off, { once: true });
  });
}

async function conclude(
  pool: McpPool,
  predecessor: Predecessor,
  log: DaemonLog,
): Promise<Conclusion> {
  const { snapshot, problem } = predecessor;
  if (snapshot === undefined) {
    const cold = problem ?? "no snapshot";
    log.error(`mcpool: started cold, every server anew: ${cold}`);
    const serve = await predecessor.answer({
      ready: true,
      pid: process.pid,
      adopted: [],
      untaken: [],
      cold,
    });
    // Its origin is what the snapshot would have said: known here only as the parent.
    const from = { pid: process.ppid, version: "unknown", startedAt: 0 };
    const at = Date.now();
    return serve
      ? { serve, info: { from, at, adopted: [], cold, servingSince: at, handovers: 0 } }
      : { serve, why: "the old daemon serves on" };
  }
  const called = (): Conclusion => ({ serve: false, why: "the old daemon called it off" });
  await pool.flush();
  // Called off meanwhile (calledOff() concluded, and said why): nothing more is dialled.
  if (predecessor.calledOff.aborted) return called();
  const configured = new Set(pool.state().map((state) => state.id));
  const ids = snapshot.servers
    .filter((server) => handedKey(server) === undefined && configured.has(server.serverId))
    .map((server) => server.serverId);
  // An http row's moved session is taken up now too, so its GET stream is listened on at once.
  const sessions = snapshot.sessions ?? [];
  const rowSessions = sessions.filter(
    (s) => s.conversation === undefined && s.profile === undefined,
  );
  const dialled = [
    ...ids,
    ...rowSessions.map((s) => s.serverId).filter((id) => configured.has(id)),
  ];
  await Promise.allSettled(dialled.map((id) => pool.client(id)));
  // The children a row runs besides its own (a host profile's http session among them),
  // made and dialled now as their first use would.
  const besides = predecessor.besides();
  await pool.adoptProfileChildren(
    [...besides, ...sessions].flatMap(({ serverId, profile }) =>
      profile ? [{ serverId, ...profile }] : [],
    ),
  );
  // A conversation's child, or its http session: its client opened now, as its next use would.
  const conversations = await pool.adoptConversationChildren(
    [...besides, ...sessions].flatMap(({ serverId, conversation }) =>
      conversation ? [{ serverId, ...conversation }] : [],
    ),
  );
  if (predecessor.calledOff.aborted) return called();
  const states = new Map(pool.state().map((state) => [state.id, state]));
  const serving = (server: HandedServer): boolean => {
    const state = states.get(server.serverId);
    const pid = server.child.pid;
    if (server.conversation) {
      const { key } = server.conversation;
      return conversations.some(
        (child) => child.serverId === server.serverId && child.key === key && child.pid === pid,
      );
    }
    if (server.profile) {
      return (state?.profiles ?? []).some((child) => child.status === "ready" && child.pid === pid);
    }
    return state?.status === "ready" && state.pid === pid;
  };
  const taken = predecessor.taken();
  const failed = taken.flatMap((server) => {
    if (serving(server)) return [];
    const state = states.get(server.serverId);
    const why = handedKey(server) === undefined ? (state?.error ?? state?.status) : "not serving";
    return [`${childLabel(server)} (pid ${server.child.pid}): ${why ?? "gone"}`];
  });
  if (failed.length > 0) {
    const why = `could not adopt ${failed.join("; ")}`;
    log.error(`mcpool: ${why}; the old daemon serves on`);
    // No record is taken up: a host's request that waited for one is told why.
    pool.forgoTasks(`${why}; the old daemon serves on`);
    await predecessor.answer({ ready: false, pid: process.pid, why });
    return { serve: false, why };
  }
  const untaken = predecessor.closeUntaken();
  // The hosts' tasks live on in the children taken: their records come along. A host's
  // entry may have dialled this daemon already: its requests about them waited for this.
  // So do those of the http sessions a dial took: the same session holds them still.
  const takenSessions = predecessor.takenSessions();
  const moved = takenTasks(snapshot.tasks, new Set([...taken.map(nameOf), ...takenSessions]));
  // A record not taken up is a host's task it will hear "not found" of: said, with why.
  for (const { task, why } of pool.adoptTasks(moved, UNCLAIMED_TASK_HOLD_MS)) {
    log.error(
      `mcpool: did not take up task ${task.taskId} of ${childName(task.serverId, task.profileKey)}: ${why}`,
    );
  }
  const adopted = taken.filter((s) => handedKey(s) === undefined).map((s) => s.serverId);
  // A row's own http session that moved holds its subscriptions still, as a child does.
  const sessionRows = rowSessions.map((s) => s.serverId).filter((id) => takenSessions.includes(id));
  // A host profile's child or http session taken holds the subscriptions of its hosts.
  const profiled = [...taken, ...sessions.filter((s) => takenSessions.includes(nameOf(s)))].flatMap(
    (s) => (s.profile !== undefined ? [subscriptionPlace(s.serverId, s.profile.key)] : []),
  );
  adoptSubscriptions(pool, [...adopted, ...sessionRows, ...profiled]);
  const children = taken.filter((s) => handedKey(s) !== undefined).map(childLabel);
  const also = children.length > 0 ? { children } : {};
  const serve = await predecessor.answer({
    ready: true,
    pid: process.pid,
    adopted,
    ...also,
    untaken,
    untakenSessions: predecessor.untakenSessions(),
  });
  if (!serve) return { serve, why: "the old daemon serves on" };
  const names = [...adopted, ...children];
  log.info(
    `mcpool: took over from pid ${snapshot.from.pid} (${snapshot.from.version}): ${names.length} children adopted${names.length > 0 ? `: ${names.join(", ")}` : ""}`,
  );
  const { servingSince, handovers, ...from } = snapshot.from;
  const line = { servingSince: servingSince ?? from.startedAt, handovers: (handovers ?? 0) + 1 };
  return { serve, info: { from, at: snapshot.at, adopted, ...also, ...line } };
}
