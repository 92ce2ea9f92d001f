/**
 * An HTTP row's connection closed by someone other than the pool: the SDK's
 * Streamable HTTP transport says onclose inside close() every time it is called, and the
 * pool closes the transport of a connection it lost. Without a transport whose close runs
 * once, the two re-entered each other until the stack overflowed, and the loss was said
 * once per frame. Real loopback server (test/helpers/session-server.ts), no mocks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { McpPool, type PoolEvent } from "../../src/index.js";
import { sessionServer, type SessionServer } from "../helpers/session-server.js";

const pools: McpPool[] = [];
const servers: SessionServer[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("an HTTP connection closed outside the pool", () => {
  it("is said lost once, and the pool still closes after its server is gone", async () => {
    const remote = await sessionServer();
    servers.push(remote);
    const logged: string[] = [];
    const pool = new McpPool({
      clientName: "mcpool-test",
      log: { error: (message) => logged.push(message) },
      // No redial of its own: the one loss is all this test looks at.
      crashBackoffMs: 60_000,
    });
    pools.push(pool);
    const closes: PoolEvent[] = [];
    pool.onEvent((event) => {
      if (event.type === "close") closes.push(event);
    });
    await pool.sync([{ id: "orders", transport: "http", url: remote.url, lazy: true }]);
    const client = await pool.client("orders");
    // A caller hangs up the client pool.client() handed out.
    await client.close();
    expect(closes).toHaveLength(1);
    expect(closes[0]).toMatchObject({ serverId: "orders", reason: "crash" });
    expect(logged.filter((line) => line.includes('server "orders"'))).toHaveLength(1);
    await servers.splice(0)[0]!.close();
    await expect(pool.close()).resolves.toBeUndefined();
  });
});
