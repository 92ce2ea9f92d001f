/**
 * The old daemon's parts for handOver() (src/daemon/handover/hand-over.ts), as our own
 * objects that record each step they are asked to take, in order: for tests of the order of
 * a hand-over's steps, which real parts could not show.
 */
import type { McpPool } from "../../src/pool/pool.js";
import type { SocketServer } from "../../src/daemon/socket/server.js";
import type { DaemonLog } from "../../src/daemon/process/logger.js";
import type { HandedFronts } from "../../src/daemon/handover/hand-over.js";

/** Our own objects, each step recorded in order. */
export function parts(steps: string[], listeningFd = 9) {
  const step = (name: string, value?: unknown) => (): unknown => {
    steps.push(name);
    return value;
  };
  const pool = {
    handedSubscriptions: {
      holdSubscriptions: step("hold subscriptions"),
      handedSubscriptions: step("hand subscriptions", []),
      unholdSubscriptions: step("unhold subscriptions"),
    },
    holdTasks: step("hold tasks"),
    handOffTasks: step("hand off tasks", []),
    handOff: () => Promise.resolve(step("hand off children", [])()),
    handOffSessions: () => Promise.resolve(step("hand off sessions", [])()),
    resumeTasks: step("resume tasks"),
    // The hand-over's turn of the reconcile queue, from its first step to its last.
    handingOver: async (work: () => Promise<unknown>) => {
      steps.push("hold reconciles");
      try {
        return await work();
      } finally {
        steps.push("let reconciles go");
      }
    },
  } as unknown as McpPool;
  const server = {
    listeningFd,
    hold: step("server hold"),
    letGo: step("server let go"),
    unhold: () => Promise.resolve(step("server unhold")()),
  } as unknown as SocketServer;
  const fronts: HandedFronts = {
    hold: () => Promise.resolve(step("fronts hold", [])() as []),
    letGo: step("fronts let go") as () => void,
    resume: () => Promise.resolve(void step("fronts resume")()),
    release: () => Promise.resolve(void step("fronts release")()),
  };
  const log = { info: () => undefined, error: () => undefined } as unknown as DaemonLog;
  const lock = {
    release: step("lock release") as () => void,
    take: () => Promise.resolve(Boolean(step("lock take", true)())),
  };
  return { pool, server, fronts, log, lock };
}
