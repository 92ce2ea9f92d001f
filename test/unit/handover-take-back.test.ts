/**
 * A hand-over that fails before the new daemon is started takes back all it held, and takes
 * the pool back before the sockets accept again, so a host that comes back finds it as it was.
 */
import { describe, expect, it } from "vitest";
import type { McpPool } from "../../src/pool/pool.js";
import type { SocketServer } from "../../src/daemon/socket/server.js";
import type { DaemonLog } from "../../src/daemon/process/logger.js";
import { handOver, type HandedFronts } from "../../src/daemon/handover/hand-over.js";

/** Our own objects, each step recorded in order. */
function parts(steps: string[]) {
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
  } as unknown as McpPool;
  const server = {
    listeningFd: 9,
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

describe("a hand-over that fails before the new daemon starts", () => {
  it("takes back what it held, the pool before the sockets, and says why", async () => {
    const steps: string[] = [];
    const deps = {
      ...parts(steps),
      successor: (): never => {
        throw new Error("this process was not started from a script");
      },
      from: { pid: process.pid, version: "0.0.0", startedAt: Date.now() },
      inherited: false,
      marks: [],
    };
    const refused = await handOver(deps as Parameters<typeof handOver>[0], 1).catch(
      (error: unknown) => error as Error & { code?: string },
    );
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain("this process was not started from a script");
    expect((refused as { code?: string }).code).toBe("handover-failed");
    const after = steps.slice(steps.indexOf("hand subscriptions") + 1);
    expect(after).toEqual([
      "resume tasks",
      "unhold subscriptions",
      "server unhold",
      "fronts resume",
    ]);
    // The lock was never let go, so it is not taken again.
    expect(steps).not.toContain("lock release");
  });
});
