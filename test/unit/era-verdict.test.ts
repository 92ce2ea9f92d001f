/**
 * A whole-pool bridge's era verdict (whether its servers speak only the legacy era) follows
 * the latest picture of the pool: the states asked after each event are numbered, and an
 * answer older than the last one asked is not taken, whatever order the answers come in. A
 * reconcile that adds or removes rows re-decides it, as no connect or close of a lazy row does.
 */
import { describe, expect, it } from "vitest";
import type { PoolEvent, ServerState } from "mcpool-client";
import { watchLegacyOnly } from "../../src/bridge/legacy/bridge-server.js";
import { scopeOf } from "../../src/bridge/core/naming.js";

const row = (id: string, era: "legacy" | "modern"): ServerState =>
  ({ id, status: "ready", era }) as ServerState;

/** A pool whose state() answers wait until the test resolves them, in any order. */
function fakePool() {
  let listener: ((event: PoolEvent) => void) | undefined;
  const asked: ((states: ServerState[]) => void)[] = [];
  return {
    asked,
    emit: (event: PoolEvent) => listener!(event),
    upstream: {
      onEvent: (l: (event: PoolEvent) => void) => {
        listener = l;
        return () => undefined;
      },
      state: () => new Promise<ServerState[]>((resolve) => asked.push(resolve)),
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("a whole-pool bridge's era verdict", () => {
  it("takes the answer to the latest question, not the last to arrive", async () => {
    const pool = fakePool();
    const scope = scopeOf({});
    const watch = watchLegacyOnly(pool.upstream as never, scope, [row("old", "legacy")], false);
    expect(watch.legacyOnly).toBe(true);
    pool.emit({ type: "connect", serverId: "new", ms: 1, tools: 1 });
    pool.emit({ type: "close", serverId: "new", reason: "removed" });
    expect(pool.asked).toHaveLength(2);
    // The latest picture (the modern row gone again) arrives first, the older one after.
    pool.asked[1]!([row("old", "legacy")]);
    await settle();
    pool.asked[0]!([row("old", "legacy"), row("new", "modern")]);
    await settle();
    expect(watch.legacyOnly).toBe(true);
  });

  it("is decided again when a reconcile adds or removes rows that never connected", async () => {
    const pool = fakePool();
    const start = [row("old", "legacy"), row("lazy", "modern")];
    const watch = watchLegacyOnly(pool.upstream as never, scopeOf({}), start, false);
    expect(watch.legacyOnly).toBe(false);
    pool.emit({ type: "rows-changed", added: [], removed: ["lazy"], changed: [] });
    pool.asked[0]!([row("old", "legacy")]);
    await settle();
    expect(watch.legacyOnly).toBe(true);
    pool.emit({ type: "rows-changed", added: ["lazy"], removed: [], changed: [] });
    pool.asked[1]!(start);
    await settle();
    expect(watch.legacyOnly).toBe(false);
  });
});
