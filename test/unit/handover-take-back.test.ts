/**
 * A hand-over that fails before the new daemon is started takes back all it held, and takes
 * the pool back before the sockets accept again, so a host that comes back finds it as it was.
 */
import { describe, expect, it } from "vitest";
import type { SocketServer } from "../../src/daemon/socket/server.js";
import { handOver } from "../../src/daemon/handover/hand-over.js";
import { parts } from "../helpers/handover-parts.js";

/** The rest of a hand-over's needs, with a new daemon whose command cannot be made. */
const UNSTARTABLE = {
  successor: (): never => {
    throw new Error("this process was not started from a script");
  },
  from: { pid: process.pid, version: "0.0.0", startedAt: Date.now() },
  inherited: false,
  marks: [],
};

describe("a hand-over that fails before the new daemon starts", () => {
  it("takes back what it held, the pool before the sockets, and says why", async () => {
    const steps: string[] = [];
    const deps = {
      ...parts(steps),
      ...UNSTARTABLE,
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
      // Only now may a reconcile asked for meanwhile run.
      "let reconciles go",
    ]);
    // The lock was never let go, so it is not taken again.
    expect(steps).not.toContain("lock release");
  });

  it("stops the daemon, fronts left alone, when its socket cannot be listened on again", async () => {
    const steps: string[] = [];
    const stopped: string[] = [];
    const held = parts(steps);
    const server = {
      ...(held.server as object),
      unhold: () => Promise.reject(new Error("EISDIR: the path is a folder")),
    } as unknown as SocketServer;
    const deps = {
      ...held,
      server,
      stop: (why: string) => void stopped.push(why),
      ...UNSTARTABLE,
    };
    const refused = await handOver(deps as Parameters<typeof handOver>[0], 1).catch(
      (error: unknown) => error as Error,
    );
    expect((refused as Error).message).toContain(
      "it could not listen on its socket again: EISDIR: the path is a folder, so this daemon stops",
    );
    expect(stopped).toEqual([
      "it could not listen on its socket again: EISDIR: the path is a folder",
    ]);
    // Nothing accepts again: a daemon that serves no one stops instead.
    expect(steps).not.toContain("fronts resume");
  });
});
