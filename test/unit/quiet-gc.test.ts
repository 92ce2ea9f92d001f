import { afterEach, describe, expect, it } from "vitest";
import { startQuietGc, type QuietGc } from "../../src/daemon/process/quiet-gc.js";

const MB = 1024 * 1024;
const running: QuietGc[] = [];
afterEach(() => {
  for (const gc of running.splice(0)) gc.stop();
});

/** Resolves once `condition` holds, checked every 5 ms; fails after `ms`. */
async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A quiet collector on a heap the test sizes; `looks` counts the periods it looked at. */
function watched(quietUtilization?: number) {
  const state = { heap: 10 * MB, looks: 0, collected: 0 };
  let wake = (): void => undefined;
  const gc = startQuietGc({
    activity: (callback) => {
      wake = callback;
      return () => (wake = () => undefined);
    },
    periodMs: 10,
    growthBytes: 16 * MB,
    ...(quietUtilization !== undefined ? { quietUtilization } : {}),
    heapBytes: () => {
      state.looks++;
      return state.heap;
    },
    collect: () => {
      state.collected++;
      state.heap = 12 * MB;
    },
  });
  running.push(gc);
  return { state, gc, wake: () => wake() };
}

describe("startQuietGc", () => {
  it("collects once when the heap has grown and the loop is quiet, and not again until it grows again", async () => {
    const { state, gc, wake } = watched();
    // Each poll is activity, as the burst's own collections would be.
    const busyUntil = (condition: () => boolean, what: string) =>
      until(() => (wake(), condition()), 10_000, what);
    const start = state.looks;
    await busyUntil(() => state.looks >= start + 5, "five looks");
    expect(state.collected).toBe(0);
    state.heap = 60 * MB;
    await busyUntil(() => state.collected === 1, "the collection");
    const after = state.looks;
    await busyUntil(() => state.looks >= after + 5, "five more looks");
    expect(state.collected).toBe(1);
    expect(gc.collections).toBe(1);
    state.heap = 40 * MB;
    await busyUntil(() => state.collected === 2, "the second collection");
  });

  it("leaves a busy loop to V8, however grown the heap", async () => {
    const { state } = watched(0);
    state.heap = 60 * MB;
    const start = state.looks;
    await until(() => state.looks >= start + 5, 10_000, "five looks");
    expect(state.collected).toBe(0);
  });

  it("never wakes an idle process: after a look that found it quiet, none is due until activity", async () => {
    const { state, gc, wake } = watched();
    expect(gc.waiting).toBe(true);
    const start = state.looks;
    await until(() => state.looks > start && !gc.waiting, 10_000, "the first look");
    expect(gc.waiting).toBe(false);
    wake();
    expect(gc.waiting).toBe(true);
  });
});
