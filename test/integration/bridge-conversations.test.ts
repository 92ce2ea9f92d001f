/**
 * Per-conversation rows through the bridge (`session: "conversation"`): each host connection is a
 * conversation of its own, ended when the host goes away, unless the host names one with
 * `_meta["mcpool/conversationId"]`. The bridge runs in this process against a real daemon;
 * hosts are SDK Clients over in-memory pairs.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import { afterEach, describe, expect, it } from "vitest";
import { createBridge, type Bridge } from "../../src/bridge/index.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { waitFor } from "../helpers/processes.js";
import { sessionServer, type SessionServer } from "../helpers/session-server.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function setup(
  server?: string,
): Promise<{ remote: SessionServer; bridge: Bridge; pool: PoolClient }> {
  const remote = await sessionServer();
  cleanups.push(() => remote.close());
  const home: TestHome = testHome();
  cleanups.push(async () => home.remove());
  home.writeConfig({ orders: { type: "http", url: remote.url, session: "conversation" } });
  const daemon: RunningDaemon = await startDaemon(home);
  cleanups.push(() => daemon.stop());
  const pool = await poolClient(home, "bridge");
  cleanups.push(() => pool.close());
  const bridge = await createBridge(
    server === undefined ? { client: pool } : { client: pool, server },
  );
  cleanups.push(() => bridge.close());
  return { remote, bridge, pool };
}

async function host(bridge: Bridge): Promise<Client> {
  const [hostSide, bridgeSide] = InMemoryTransport.createLinkedPair();
  await bridge.createServer().connect(bridgeSide);
  const created = new Client({ name: "host", version: "1.0.0" });
  await created.connect(hostSide);
  cleanups.push(() => created.close());
  return created;
}

const text = (result: unknown): string =>
  ((result as CallToolResult).content as { text?: string }[]).map((b) => b.text).join("");

describe("per-conversation rows through the bridge", () => {
  it("makes each host connection a conversation, and ends it when the host goes away", async () => {
    const { remote, bridge } = await setup();
    const first = await host(bridge);
    const second = await host(bridge);
    const listed = await first.listTools();
    expect(listed.tools.map((t) => t.name)).toContain("orders__count");
    expect(text(await first.callTool({ name: "orders__count" }))).toBe("1");
    expect(text(await first.callTool({ name: "orders__count" }))).toBe("2");
    expect(text(await second.callTool({ name: "orders__count" }))).toBe("1");
    expect(remote.opened()).toBe(2);

    await first.close();
    await waitFor(() => remote.count("DELETE") === 1, 10_000, "the first host's DELETE");
    expect(remote.sessions()).toBe(1);
  });

  it("serves the conversation a host names, across its connections", async () => {
    const { remote, bridge } = await setup();
    const meta = { "mcpool/conversationId": "thread-42" };
    const one = await host(bridge);
    expect(text(await one.callTool({ name: "orders__count", _meta: meta }))).toBe("1");
    await one.close();
    const two = await host(bridge);
    expect(text(await two.callTool({ name: "orders__count", _meta: meta }))).toBe("2");
    expect(remote.opened()).toBe(1);
  });

  it("lists the row's tools as the server does direct through a bridge for that one server", async () => {
    const { remote, bridge } = await setup("orders");
    remote.setTools([
      {
        name: "lookup",
        title: "Look up an order",
        description: "Finds one order.",
        inputSchema: { type: "object", properties: { id: { type: "string" } } },
        annotations: { readOnlyHint: true },
      },
    ]);
    const first = await host(bridge);
    const listed = await first.listTools();
    expect(text(await first.callTool({ name: "count" }))).toBe("1");
    expect(remote.opened()).toBe(1);

    const direct = new Client({ name: "host", version: "1.0.0" });
    await direct.connect(new StreamableHTTPClientTransport(new URL(remote.url)));
    cleanups.push(() => direct.close());
    expect(listed.tools).toEqual((await direct.listTools()).tools);
  });
});
