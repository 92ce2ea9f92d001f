import { describe, expect, it } from "vitest";

import {
  backoffMs,
  CRASH_LOOP_AFTER,
  failureStatus,
  HEALTHY_AFTER_MS,
  MAX_BACKOFF_MS,
  wasHealthy,
} from "../../src/pool/server/backoff.js";

describe("backoff arithmetic", () => {
  it("doubles the base each failure in a row and stops at the ceiling", () => {
    expect([1, 2, 3, 4].map((failures) => backoffMs(1000, failures))).toEqual([
      1000, 2000, 4000, 8000,
    ]);
    expect(backoffMs(1000, 40)).toBe(MAX_BACKOFF_MS);
  });

  it("says crash-loop from the CRASH_LOOP_AFTER-th failure in a row", () => {
    expect(failureStatus(CRASH_LOOP_AFTER - 1)).toBe("error");
    expect(failureStatus(CRASH_LOOP_AFTER)).toBe("crash-loop");
  });

  it("takes a connection that answered, or lasted, for a healthy one", () => {
    expect(wasHealthy({ answered: true, startedAt: 0 }, 1)).toBe(true);
    expect(wasHealthy({ answered: false, startedAt: 0 }, HEALTHY_AFTER_MS - 1)).toBe(false);
    expect(wasHealthy({ answered: false, startedAt: 0 }, HEALTHY_AFTER_MS)).toBe(true);
  });
});
