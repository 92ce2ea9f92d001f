/**
 * A new daemon whose spawn is refused at once (a descriptor that cannot be passed: no process
 * starts) is no one to hand the sockets to: the old daemon lets go of nothing, so its sockets
 * go on listening, and it takes back the rest. The old daemon's parts are our own, recording
 * each step; the spawn is real. A reconcile asked for in the middle of it (an edit of
 * mcp.json, a reload) waits for it: here a real pool's, asked for as the socket is held.
 */
import { describe, expect, it } from "vitest";
import { handOver } from "../../src/daemon/handover/hand-over.js";
import { McpPool } from "../../src/pool/pool.js";
import { parts } from "../helpers/handover-parts.js";

/** A descriptor number no process here has open: spawn(2) with it fails with EBADF. */
const NOT_OPEN_FD = 98_765;

/**
 * handOver() with our parts, those in `own` instead, and a new daemon refused at once;
 * resolves with the error it throws.
 */
function refusedHandOver(steps: string[], own: Record<string, unknown> = {}): Promise<Error> {
  const deps = {
    ...parts(steps, NOT_OPEN_FD),
    ...own,
    successor: () => ({ command: process.execPath, args: ["--version"] }),
    from: { pid: process.pid, version: "0.0.0", startedAt: Date.now() },
    inherited: false,
    marks: [],
  };
  return handOver(deps as Parameters<typeof handOver>[0], 1).then(
    () => new Error("handed over"),
    (error: unknown) => error as Error,
  );
}

describe("a hand-over whose new daemon is refused at once", () => {
  it("lets go of no socket, takes the lock back and accepts again", async () => {
    const steps: string[] = [];
    const refused = await refusedHandOver(steps);
    expect(refused.message).toContain("the new daemon could not start");
    expect(refused.message).toContain("so this one serves on");
    expect(steps).not.toContain("server let go");
    expect(steps).not.toContain("fronts let go");
    const after = steps.slice(steps.indexOf("lock release"));
    expect(after).toEqual([
      "lock release",
      "lock take",
      "resume tasks",
      "unhold subscriptions",
      "server unhold",
      "fronts resume",
      "let reconciles go",
    ]);
    // Nothing is held before the hand-over's turn of the reconcile queue, nor after it.
    expect(steps[0]).toBe("hold reconciles");
  });

  it("runs a reconcile asked for meanwhile once it took everything back, not in the middle", async () => {
    const steps: string[] = [];
    // A real pool, whose reconcile reads its rows (none) by load(): each read is a step.
    const pool = new McpPool({
      clientName: "hand-over test",
      load: () => {
        steps.push("reconcile");
        return [];
      },
    });
    try {
      await pool.sync();
      steps.splice(0);
      let edited: Promise<void> | undefined;
      const server = {
        ...parts(steps, NOT_OPEN_FD).server,
        hold: () => {
          steps.push("server hold");
          edited = pool.sync();
        },
      };
      const refused = await refusedHandOver(steps, { pool, server });
      expect(refused.message).toContain("so this one serves on");
      await edited;
      expect(steps.slice(steps.indexOf("server hold"))).toEqual([
        "server hold",
        "fronts hold",
        "lock release",
        "lock take",
        "server unhold",
        "fronts resume",
        "reconcile",
      ]);
    } finally {
      await pool.close();
    }
  });
});
