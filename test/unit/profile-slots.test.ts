/**
 * The cap on a row's children for host profiles (src/pool/profile-slots.ts): what counts
 * against it is every process the row runs for hosts — its live children and the
 * connections opened ahead for hosts of other capability sets — and a child waiting for a
 * slot starts once one of those ends.
 */
import { describe, expect, it } from "vitest";
import { ProfileSlots } from "../../src/pool/profile-slots.js";
import type { ProfileEntry } from "../../src/pool/server/profile-entry.js";

/** A child as take() reads it: live while it has a connection, busy while a call is in flight. */
function child(id: string, fields: Record<string, unknown> = {}): ProfileEntry {
  return {
    id,
    connection: { inflight: 1, pid: 1 },
    connecting: false,
    ready: true,
    inUse: false,
    usedAt: 0,
    close: async () => undefined,
    ...fields,
  } as unknown as ProfileEntry;
}

/** A new child of a row running one busy child and one connection ahead, within 1 ms. */
function startBesideOne(slots: ProfileSlots): Promise<string> {
  const next = child("fs", { connection: undefined });
  return slots.take(
    next,
    () => [child("fs"), next],
    () => 1,
    1,
    async () => "started",
  );
}

const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe("the cap on a row's children for host profiles", () => {
  it("counts the connections opened ahead for other capability sets, and starts a waiting child once one ends", async () => {
    const slots = new ProfileSlots(2, log as never);
    const busy = child("fs");
    const next = child("fs", { connection: undefined });
    let ahead = 1;
    let started = false;
    const starting = slots.take(
      next,
      () => [busy, next],
      () => ahead,
      10_000,
      async () => {
        started = true;
        return "started";
      },
    );
    // One child and one connection ahead fill a cap of two: the new child waits.
    await Promise.resolve();
    expect(started).toBe(false);
    ahead = 0;
    slots.changed("fs");
    await expect(starting).resolves.toBe("started");
  });

  it("refuses, naming the cap, a child for which no process ends within its bound", async () => {
    await expect(startBesideOne(new ProfileSlots(2, log as never))).rejects.toThrow(
      /already runs 2 children .*mcpool\.maxChildrenPerServer is 2/,
    );
  });

  it("starts a child at once while its row's processes leave room", async () => {
    await expect(startBesideOne(new ProfileSlots(3, log as never))).resolves.toBe("started");
  });
});
