/**
 * A task's status that came before the answer naming the task: kept while a task-augmented
 * call to its server is in flight, handed over when claimed, gone once no call can claim it,
 * and never more than a bounded count.
 */
import { describe, expect, it } from "vitest";
import { EarlyStatuses } from "../../src/pool/calls/early-statuses.js";

const status = (taskId: string, n = 0) => ({
  method: "notifications/tasks/status",
  params: { taskId, status: "working", statusMessage: `#${n}` },
});

describe("statuses said before their task", () => {
  it("keeps nothing when no task-augmented call is in flight", () => {
    const early = new EarlyStatuses();
    expect(early.keep("s", "t", status("t"))).toBe(false);
    expect(early.claim("s", "t")).toEqual([]);
  });

  it("hands a kept status to the answer that names its task, in order, once", () => {
    const early = new EarlyStatuses();
    const done = early.asking("s");
    expect(early.keep("s", "t", status("t", 1))).toBe(true);
    expect(early.keep("s", "u", status("u"))).toBe(true);
    expect(early.keep("s", "t", status("t", 2))).toBe(true);
    expect(early.claim("other", "t")).toEqual([]);
    expect(early.claim("s", "t")).toEqual([status("t", 1), status("t", 2)]);
    expect(early.claim("s", "t")).toEqual([]);
    done();
  });

  it("forgets what no call can claim once the last call of the server is over", () => {
    const early = new EarlyStatuses();
    const first = early.asking("s");
    const second = early.asking("s");
    early.keep("s", "t", status("t"));
    first();
    first(); // said twice: counted once
    expect(early.keep("s", "u", status("u"))).toBe(true);
    second();
    expect(early.claim("s", "t")).toEqual([]);
    expect(early.keep("s", "t", status("t"))).toBe(false);
  });

  it("keeps at most a bounded count, the oldest going first", () => {
    const early = new EarlyStatuses();
    const done = early.asking("s");
    for (let n = 0; n < 300; n++) early.keep("s", "t", status("t", n));
    const kept = early.claim("s", "t");
    expect(kept).toHaveLength(256);
    expect(kept[0]).toEqual(status("t", 300 - 256));
    done();
  });
});
