/**
 * The pool's public method names keep working: every method of McpPool, and the methods of
 * per-conversation rows, called by that name.
 */
import { afterEach, describe, expect, it } from "vitest";

import type { McpPool } from "../../src/index.js";
import { echoServer, makePool, memoryRow } from "../../src/testing/index.js";

const pools: McpPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

describe("the pool's public method names", () => {
  it("answers every pool method by its public name, shutdown() included", async () => {
    const pool = makePool({ servers: { echo: () => echoServer() } });
    pools.push(pool);
    const events: string[] = [];
    const offEvent = pool.onEvent((event) => events.push(event.type));
    const offNotification = pool.onNotification(() => undefined);
    await pool.sync([memoryRow("echo")]);
    pool.syncSoon().catch(() => undefined);
    await pool.flush();
    expect(pool.state().map((s) => s.id)).toEqual(["echo"]);
    expect(pool.tools().map((t) => t.function.name)).toContain("echo__add");
    expect(pool.catalog()[0]!.id).toBe("echo");
    expect(pool.search("add")[0]!.id).toBe("echo");
    expect(pool.alwaysLoaded()).toEqual([]);
    expect(pool.describe("echo__add")?.serverId).toBe("echo");
    expect(await pool.call("echo__add", { a: 1, b: 2 })).toBe('add({"a":1,"b":2})');
    expect(await pool.client("echo")).toBeDefined();
    expect(await pool.use("echo", async () => "used")).toBe("used");
    expect((await pool.probe(memoryRow("echo"))).ok).toBe(true);
    expect(await pool.runHooks("before-run" as never, {} as never)).toEqual([]);
    await pool.stop("echo");
    await pool.reconnect("echo");
    expect(pool.state()[0]!.status).toBe("ready");
    offEvent();
    offNotification();
    expect(events).toContain("connect");
    await pool.shutdown();
    await expect(pool.call("echo__add", {})).rejects.toMatchObject({ code: "closed" });
    // close() is shutdown()'s Node-style alias, and both are idempotent.
    await pool.close();
    await pool.shutdown();
  });

  it("answers the methods of per-conversation rows by their public names", () => {
    const pool = makePool({ servers: {} });
    pools.push(pool);
    for (const name of [
      "acquire",
      "terminate",
      "permissionsChanged",
      "toolsChanged",
      "sweep",
      "settled",
      "close",
    ] as const) {
      expect(typeof pool.conversations[name], name).toBe("function");
    }
  });
});
