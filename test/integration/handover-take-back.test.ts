/**
 * A new daemon whose spawn is refused at once (a descriptor that cannot be passed: no process
 * starts) is no one to hand the sockets to: the old daemon lets go of nothing, so its sockets
 * go on listening, and it takes back the rest. The old daemon's parts are our own, recording
 * each step; the spawn is real.
 */
import { describe, expect, it } from "vitest";
import { handOver } from "../../src/daemon/handover/hand-over.js";
import { parts } from "../helpers/handover-parts.js";

/** A descriptor number no process here has open: spawn(2) with it fails with EBADF. */
const NOT_OPEN_FD = 98_765;

describe("a hand-over whose new daemon is refused at once", () => {
  it("lets go of no socket, takes the lock back and accepts again", async () => {
    const steps: string[] = [];
    const deps = {
      ...parts(steps, NOT_OPEN_FD),
      successor: () => ({ command: process.execPath, args: ["--version"] }),
      from: { pid: process.pid, version: "0.0.0", startedAt: Date.now() },
      inherited: false,
      marks: [],
    };
    const refused = await handOver(deps as Parameters<typeof handOver>[0], 1).catch(
      (error: unknown) => error as Error,
    );
    expect((refused as Error).message).toContain("the new daemon could not start");
    expect((refused as Error).message).toContain("so this one serves on");
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
    ]);
  });
});
