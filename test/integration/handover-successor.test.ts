/**
 * The old daemon's start of the new one (src/daemon/handover/successor.ts): a spawn refused
 * at once — a descriptor that cannot be passed — is an answer that it did not start, never a
 * throw that would leave the old daemon holding its sockets with its lock let go.
 */
import { describe, expect, it } from "vitest";
import { startSuccessor } from "../../src/daemon/handover/successor.js";
import { SNAPSHOT_VERSION, type Snapshot } from "../../src/daemon/handover/snapshot.js";

/** Far above anything this test process has open. */
const CLOSED_FD = 65_000;

describe("starting the new daemon of a hand-over", () => {
  it("answers not ready, saying why, when the spawn is refused at once", async () => {
    const snapshot: Snapshot = {
      version: SNAPSHOT_VERSION,
      from: { pid: process.pid, version: "test", startedAt: 0 },
      at: 0,
      inherited: false,
      marks: [],
      servers: [],
    };
    const successor = startSuccessor({
      command: process.execPath,
      args: ["-e", "0"],
      env: {},
      listenFd: CLOSED_FD,
      servers: [],
      fronts: [],
      snapshot,
      answerMs: 10_000,
    });
    const answer = await successor.answer;
    expect(answer).toMatchObject({ ready: false });
    expect(answer.ready ? "" : answer.why).toMatch(/^the new daemon could not start: .*EBADF/);
    successor.go(false);
  });
});
