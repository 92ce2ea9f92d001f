/**
 * The places a hand-over keeps for the listeners of a resource subscription: each is awaited
 * until its own deadline, whichever hand-over kept it. Two hand-overs within the wait (one
 * failed, then a second that failed too) keep two places; the first one's deadline lets go of
 * its place only, and the subscription holds until the second one's.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { pooledSubscriptions as pooled } from "../helpers/subscriptions.js";
import {
  holdSubscriptions,
  KEPT_SUBSCRIPTIONS_MS,
  unholdSubscriptions,
} from "../../src/daemon/handover/subscriptions.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("kept subscription places across two hand-overs", () => {
  it("lets each place go at its own deadline, not at the first hand-over's", async () => {
    const { sent, subscriptions, pool } = pooled();
    const first = await subscriptions.subscribe("s", "note://1", () => undefined);
    const second = await subscriptions.subscribe("s", "note://1", () => undefined);
    expect(sent).toEqual(["resources/subscribe s note://1"]);

    // A hand-over that fails: the first listener's place is kept.
    holdSubscriptions(pool);
    await first();
    unholdSubscriptions(pool);
    const gap = KEPT_SUBSCRIPTIONS_MS / 2;
    await vi.advanceTimersByTimeAsync(gap);

    // Another one, within the first one's wait: the second listener's place is kept too.
    holdSubscriptions(pool);
    await second();
    unholdSubscriptions(pool);
    expect(subscriptions.held("s")).toBe(true);

    // The first deadline passes: the second place is still awaited.
    await vi.advanceTimersByTimeAsync(KEPT_SUBSCRIPTIONS_MS - gap + 1);
    expect(sent).toEqual(["resources/subscribe s note://1"]);
    expect(subscriptions.held("s")).toBe(true);

    // Its listener comes back: it takes its place, and nothing is sent upstream.
    const back = await subscriptions.subscribe("s", "note://1", () => undefined);
    expect(sent).toEqual(["resources/subscribe s note://1"]);
    await vi.advanceTimersByTimeAsync(KEPT_SUBSCRIPTIONS_MS);
    expect(subscriptions.held("s")).toBe(true);
    await back();
    expect(sent).toEqual(["resources/subscribe s note://1", "resources/unsubscribe s note://1"]);
    expect(subscriptions.held("s")).toBe(false);
  });

  it("lets the second place go at its own deadline when no listener comes back", async () => {
    const { sent, subscriptions, pool } = pooled();
    const first = await subscriptions.subscribe("s", "note://1", () => undefined);
    const second = await subscriptions.subscribe("s", "note://1", () => undefined);
    holdSubscriptions(pool);
    await first();
    unholdSubscriptions(pool);
    const gap = KEPT_SUBSCRIPTIONS_MS / 2;
    await vi.advanceTimersByTimeAsync(gap);
    holdSubscriptions(pool);
    await second();
    unholdSubscriptions(pool);
    await vi.advanceTimersByTimeAsync(KEPT_SUBSCRIPTIONS_MS - gap + 1);
    expect(subscriptions.held("s")).toBe(true);
    await vi.advanceTimersByTimeAsync(gap);
    expect(sent).toEqual(["resources/subscribe s note://1", "resources/unsubscribe s note://1"]);
    expect(subscriptions.held("s")).toBe(false);
  });

  it("forgets an update kept while holding once the hand-over fails with no listener gone", async () => {
    const update = { method: "notifications/resources/updated", params: { uri: "note://1" } };
    const { subscriptions, pool } = pooled();
    const heard: unknown[] = [];
    const stays = await subscriptions.subscribe("s", "note://1", (n) => heard.push(n));
    holdSubscriptions(pool);
    subscriptions.deliver("s", update);
    unholdSubscriptions(pool);
    expect(heard).toEqual([update]);

    // A later hand-over keeps the listener's place; it comes back having missed nothing.
    holdSubscriptions(pool);
    await stays();
    unholdSubscriptions(pool);
    const back: unknown[] = [];
    await subscriptions.subscribe("s", "note://1", (n) => back.push(n));
    expect(back).toEqual([]);
  });
});
