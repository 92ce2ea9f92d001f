/**
 * The resource subscriptions one daemon hands the next in its snapshot, as the new daemon
 * reads them: an entry it cannot read (a snapshot from another build, or a damaged one) is
 * dropped with a log line saying why, never taken up half-read. An update the old daemon read
 * while the hand-over drained its children, after the listeners had left, goes along with its
 * subscription and reaches each listener that comes back to the new daemon; a listener that
 * went by its host's name has its place kept for that name, and the update it missed goes to
 * the listener of that name, not to another that subscribes first.
 */
import { describe, expect, it, vi } from "vitest";
import { pooledSubscriptions as pooled } from "../helpers/subscriptions.js";
import type { DaemonLog } from "../../src/daemon/process/logger.js";
import {
  adoptSubscriptions,
  expectSubscriptions,
  handedSubscriptions,
  holdSubscriptions,
  KEPT_SUBSCRIPTIONS_MS,
} from "../../src/daemon/handover/subscriptions.js";

/** A daemon log that keeps its error lines. */
function logged(): { log: DaemonLog; errors: string[] } {
  const errors: string[] = [];
  const log = {
    info: () => undefined,
    error: (line: string) => void errors.push(line),
  } as unknown as DaemonLog;
  return { log, errors };
}

/**
 * `old`'s snapshot after its one listener of no name left in the hold and `update` was read
 * from the child after the listener's connection closed, before the drain ended.
 */
async function missedByOne(old: ReturnType<typeof pooled>, update: unknown): Promise<unknown> {
  const leave = await old.subscriptions.subscribe("s", "note://1", () => undefined);
  holdSubscriptions(old.pool);
  await leave();
  old.subscriptions.deliver("s", update as never);
  return JSON.parse(JSON.stringify(handedSubscriptions(old.pool))) as unknown;
}

describe("the snapshot's subscriptions, as the new daemon reads them", () => {
  it("takes up each well-formed one and drops each other one with a line saying why", () => {
    const { subscriptions, pool } = pooled();
    const { log, errors } = logged();
    expectSubscriptions(
      pool,
      [
        { serverId: "good", uri: "note://1", listeners: 2 },
        { serverId: "text", uri: "note://1", listeners: "2" },
        { serverId: "half", uri: "note://1", listeners: 1.5 },
        { serverId: "none", uri: "note://1", listeners: 0 },
        { serverId: 7, uri: "note://1", listeners: 1 },
        { serverId: "nouri", listeners: 1 },
        null,
      ],
      log,
    );
    expect(subscriptions.held("good")).toBe(true);
    for (const id of ["text", "half", "none", "7", "nouri"]) {
      expect(subscriptions.held(id)).toBe(false);
    }
    expect(errors).toHaveLength(6);
    for (const line of errors) {
      expect(line).toMatch(
        /^mcpool: handed resource subscription \d.* is not one this mcpool reads \(/,
      );
    }
    expect(errors[0]).toContain('handed resource subscription 2 of server "text"');
    expect(errors[0]).toContain("its listeners are not a positive integer");
    expect(errors[4]).toContain("its URI is not a string");
    expect(errors[5]).toContain("it is not an object");
  });

  it("takes up none when they are not a list, and says so", () => {
    const { subscriptions, pool } = pooled();
    const { log, errors } = logged();
    expectSubscriptions(pool, { serverId: "good", uri: "note://1", listeners: 1 }, log);
    expect(subscriptions.held("good")).toBe(false);
    expect(errors).toEqual([
      "mcpool: the snapshot's subscriptions are not a list (object); none is taken up",
    ]);
  });

  it("drops only a missed update it cannot read, and ends the subscription no one came back to", async () => {
    vi.useFakeTimers();
    try {
      const { sent, subscriptions, pool } = pooled();
      const { log, errors } = logged();
      const uri = "note://1?access_token=hidden";
      const missed = { method: "x", params: { uri: "note://2", secret: "hidden" } };
      expectSubscriptions(pool, [{ serverId: "s", uri, listeners: 1, missed }], log);
      adoptSubscriptions(pool, ["s"]);
      expect(subscriptions.held("s")).toBe(true);
      expect(errors).toEqual([
        'mcpool: handed resource subscription 1 of server "s": its missed update is not a resources/updated for its URI; taken up without it',
      ]);
      await vi.advanceTimersByTimeAsync(KEPT_SUBSCRIPTIONS_MS + 1);
      expect(sent).toEqual([`resources/unsubscribe s ${uri}`]);
      expect(subscriptions.held("s")).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("says what is wrong with an entry it drops, never what the entry holds", () => {
    const { log, errors } = logged();
    const { pool } = pooled();
    expectSubscriptions(pool, [{ serverId: "s", uri: "note://1?access_token=hidden" }], log);
    expect(errors).toEqual([
      'mcpool: handed resource subscription 1 of server "s" is not one this mcpool reads (its listeners are not a positive integer); dropped',
    ]);
  });
});

describe("an update read while the hand-over drains", () => {
  it("reaches the listener that comes back to the new daemon, once", async () => {
    const update = { method: "notifications/resources/updated", params: { uri: "note://1" } };
    const old = pooled();
    const snapshot = await missedByOne(old, update);

    const next = pooled();
    const { log, errors } = logged();
    expectSubscriptions(next.pool, snapshot, log);
    adoptSubscriptions(next.pool, ["s"]);
    const heard: unknown[] = [];
    await next.subscriptions.subscribe("s", "note://1", (n) => heard.push(n));
    expect(heard).toEqual([update]);
    expect(errors).toEqual([]);
    expect(old.sent).toEqual(["resources/subscribe s note://1"]);
    expect(next.sent).toEqual([]);
    // Delivered to the one listener awaited: a later listener is new, and hears only what comes.
    const later: unknown[] = [];
    await next.subscriptions.subscribe("s", "note://1", (n) => later.push(n));
    expect(later).toEqual([]);
  });

  it("is kept when it comes while the listener is still attached, its connection closing", async () => {
    const update = { method: "notifications/resources/updated", params: { uri: "note://1" } };
    const old = pooled();
    const written: unknown[] = [];
    const leave = await old.subscriptions.subscribe("s", "note://1", (n) => written.push(n));
    holdSubscriptions(old.pool);
    // Read in the hold's own turn: the socket is destroyed, its close event not yet come, so
    // the listener is still there and what it writes goes nowhere.
    old.subscriptions.deliver("s", update);
    await leave();
    expect(written).toEqual([update]);
    const snapshot: unknown = JSON.parse(JSON.stringify(handedSubscriptions(old.pool)));
    expect(snapshot).toEqual([
      { serverId: "s", uri: "note://1", listeners: 1, names: [], missed: update },
    ]);

    const next = pooled();
    const { log } = logged();
    expectSubscriptions(next.pool, snapshot, log);
    adoptSubscriptions(next.pool, ["s"]);
    const heard: unknown[] = [];
    await next.subscriptions.subscribe("s", "note://1", (n) => heard.push(n));
    expect(heard).toEqual([update]);
    const later: unknown[] = [];
    await next.subscriptions.subscribe("s", "note://1", (n) => later.push(n));
    expect(later).toEqual([]);
  });
});

describe("a place kept for a named host", () => {
  const update = { method: "notifications/resources/updated", params: { uri: "note://1" } };

  /** The new daemon's pool, its subscription taken up from `old`'s snapshot. */
  function next(snapshot: unknown): ReturnType<typeof pooled> & { errors: string[] } {
    const pool = pooled();
    const { log, errors } = logged();
    expectSubscriptions(pool.pool, snapshot, log);
    adoptSubscriptions(pool.pool, ["s"]);
    return { ...pool, errors };
  }

  it("is taken back, with the update it missed, by a listener of that name alone", async () => {
    const old = pooled();
    const leave = await old.subscriptions.subscribe("s", "note://1", () => undefined, "host-a");
    holdSubscriptions(old.pool);
    await leave();
    old.subscriptions.deliver("s", update);
    const snapshot: unknown = JSON.parse(JSON.stringify(handedSubscriptions(old.pool)));
    expect(snapshot).toEqual([
      { serverId: "s", uri: "note://1", listeners: 1, names: ["host-a"], missed: update },
    ]);

    const { subscriptions, sent, errors } = next(snapshot);
    // Another host subscribes first: it is new here, and missed nothing.
    const first: unknown[] = [];
    await subscriptions.subscribe("s", "note://1", (n) => first.push(n), "host-b");
    const nameless: unknown[] = [];
    await subscriptions.subscribe("s", "note://1", (n) => nameless.push(n));
    const back: unknown[] = [];
    await subscriptions.subscribe("s", "note://1", (n) => back.push(n), "host-a");
    expect({ first, nameless, back }).toEqual({ first: [], nameless: [], back: [update] });
    expect(sent).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("is an older build's, which named no host, taken back by the first listener, named or not", async () => {
    // The snapshot of a build that named no host: its places are nobody's in particular.
    const { subscriptions, errors } = next([
      { serverId: "s", uri: "note://1", listeners: 1, missed: update },
    ]);
    const named: unknown[] = [];
    await subscriptions.subscribe("s", "note://1", (n) => named.push(n), "host-a");
    const later: unknown[] = [];
    await subscriptions.subscribe("s", "note://1", (n) => later.push(n));
    expect({ named, later }).toEqual({ named: [update], later: [] });
    expect(errors).toEqual([]);
  });

  it("is of no name when this build's snapshot named no host, so no named listener takes it", async () => {
    const { subscriptions } = next(await missedByOne(pooled(), update));
    const named: unknown[] = [];
    await subscriptions.subscribe("s", "note://1", (n) => named.push(n), "host-a");
    const nameless: unknown[] = [];
    await subscriptions.subscribe("s", "note://1", (n) => nameless.push(n));
    expect({ named, nameless }).toEqual({ named: [], nameless: [update] });
  });

  it("takes up places anyone takes back, and says so, when the names cannot be read", () => {
    const bad = [
      { serverId: "s", uri: "note://1", listeners: 1, names: ["a", "b"] },
      { serverId: "t", uri: "note://1", listeners: 2, names: "a" },
      { serverId: "u", uri: "note://1", listeners: 2, names: [7] },
    ];
    const pool = pooled();
    const { log, errors } = logged();
    expectSubscriptions(pool.pool, bad, log);
    for (const id of ["s", "t", "u"]) expect(pool.subscriptions.held(id)).toBe(true);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toContain("its hosts' names are not a list of at most 1 strings");
    expect(errors[1]).toContain('handed resource subscription 2 of server "t"');
    for (const line of errors) {
      expect(line).toContain("taken up with places the first listener back takes, named or not");
    }
  });
});
