/**
 * Per-conversation rows through the daemon (`session: "conversation"`, over the socket): identities on
 * tools/call and tools/list, leases that end with their connection, terminate, counts in
 * `mcpool status`, and events that never carry an identity.
 */
import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import type { ConversationEvent, PoolEvent } from "mcpool-client";
import { client, cliPath } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { waitFor } from "../helpers/processes.js";
import { sessionServer, type SessionServer } from "../helpers/session-server.js";

const remotes: SessionServer[] = [];

afterEach(async () => {
  await Promise.all(remotes.splice(0).map((r) => r.close()));
});
// After the hook above: vitest runs after-hooks last-first, so this teardown comes first.
const fleet = useFleet();

async function setup(conversation: Record<string, unknown> = {}) {
  const remote = await sessionServer();
  remotes.push(remote);
  const home = fleet.home();
  home.writeConfig({
    orders: { type: "http", url: remote.url, session: "conversation", conversation },
  });
  await fleet.daemon(home);
  const agent = await fleet.agent(home, "agent");
  return { remote, home, agent };
}

const alice = { tenant: "acme", principal: "alice-secret", conversationId: "c1" };

describe("per-conversation rows through the daemon", () => {
  it("serves each identity from its own session, over tools/list and tools/call", async () => {
    const { remote, agent } = await setup();
    const seen: PoolEvent[] = [];
    agent.onEvent((event) => seen.push(event));
    const mine = agent.withIdentity(alice);
    const theirs = agent.withIdentity({ ...alice, conversationId: "c2" });
    expect((await mine.tools()).map((t) => t.function.name)).toContain("orders__count");
    expect(await mine.call("orders__count")).toBe("1");
    expect(await mine.call("orders__count")).toBe("2");
    expect(await theirs.call("orders__count")).toBe("1");
    expect(remote.opened()).toBe(2);
    // Without an identity: refused, and nothing opened.
    await expect(agent.call("orders__count")).rejects.toMatchObject({ code: "no-identity" });
    expect(remote.opened()).toBe(2);
    await waitFor(
      () => seen.filter((e) => e.type === "conversation").length >= 2,
      10_000,
      "the opened reports",
    );
    expect(JSON.stringify(seen)).not.toContain("alice-secret");
  });

  it("holds a lease until release or disconnect, refuses at once when full, and terminates", async () => {
    const { home, agent } = await setup({ maxClients: 1 });
    const lease = await agent.conversations.acquire("orders", alice);
    expect(lease.keyHash).toMatch(/^[0-9a-f]{12}$/);
    const other = agent.withIdentity({ ...alice, principal: "bob" });
    await expect(other.call("orders__count")).rejects.toMatchObject({
      code: "pool-full",
      detail: { limit: "pool" },
    });
    await lease.release();

    // A lease taken by a connection that goes away is let go.
    const second = await client(home, "second");
    await second.conversations.acquire("orders", { ...alice, principal: "carol" });
    const [stats] = await agent.conversations.stats();
    expect(stats).toMatchObject({ serverId: "orders", leases: 1, inUse: 1 });
    await second.close();
    let leases = 1;
    const deadline = Date.now() + 10_000;
    while (leases > 0 && Date.now() < deadline) {
      leases = (await agent.conversations.stats())[0]?.leases ?? -1;
      if (leases > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(leases).toBe(0);

    expect(await other.call("orders__count")).toBe("1");
    const results = await other.terminate();
    expect(results).toEqual([
      expect.objectContaining({ outcome: "terminated", resolved: true, conversationId: "c1" }),
    ]);

    const status = spawnSync(process.execPath, [cliPath, "status"], {
      env: home.env,
      encoding: "utf8",
    });
    expect(status.status).toBe(0);
    expect(status.stdout).toMatch(/^conversations$/m);
    expect(status.stdout).toMatch(/^\s+orders\s+0 open/m);
  });

  it("refuses a stale binding before anything is sent", async () => {
    const { remote, agent } = await setup();
    const mine = agent.withIdentity(alice);
    const listed = await mine.listTools();
    expect(Object.keys(listed.bindings)).toEqual(["orders"]);
    await agent.conversations.toolsChanged(["orders"]);
    const calls = remote.count("tools/call");
    const refused = await mine.call("orders__count").then(
      () => undefined,
      (e: unknown) => e as ConversationEvent & { code: string },
    );
    expect(refused?.code).toBe("stale-tools");
    expect(remote.count("tools/call")).toBe(calls);
    await mine.listTools();
    expect(await mine.call("orders__count")).toBe("1");
  });
});
