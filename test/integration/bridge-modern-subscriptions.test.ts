/**
 * A modern (2026-07-28) host's resource subscriptions: it has no
 * `resources/subscribe`; it names URIs in a `subscriptions/listen` stream. Through
 * `mcpool bridge` (the SDK stdio bridge, the lean bridge on the daemon's MCP socket, and
 * `--http`), a legacy server's `notifications/resources/updated` for a URI a host named
 * reaches that host's stream, one it did not name does not, a host that named none gets
 * nothing, and the upstream subscription goes when the stream or the connection does
 * (test/fixtures/log-levels.mjs answers `touch` with how many URIs it holds subscribed, and
 * sends an update for a URI as it takes its subscribe, before answering: the bridge routes a
 * URI before it subscribes upstream, so that update is not lost).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MODERN,
  bridgeCommand,
  httpBridge,
  stringEnv,
  type HttpBridgeProcess,
} from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const BOUND_MS = 20_000;

interface Host {
  client: Client;
  /** The URIs of every resources/updated this host was sent, in order. */
  updated: string[];
  close(): Promise<void>;
}

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

describe("a modern host's resource subscriptions through mcpool bridge", () => {
  const home = testHome("mcpool-modern-subs-");
  let daemon: RunningDaemon | undefined;
  let http: HttpBridgeProcess | undefined;
  const pids: number[] = [];

  function collect(client: Client): string[] {
    const updated: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (notification) => {
      updated.push(String((notification.params as { uri?: unknown }).uri));
    });
    return updated;
  }

  async function stdioHost(via: "sdk" | "lean"): Promise<Host> {
    const transport = new StdioClientTransport({
      ...bridgeCommand(home, [], via),
      env: stringEnv(home.env),
      stderr: "pipe",
    });
    const client = new Client({ name: `modern-${via}`, version: "1.0.0" }, MODERN);
    const updated = collect(client);
    await client.connect(transport);
    const pid = transport.pid;
    if (pid !== null) pids.push(pid);
    expect(client.getProtocolEra()).toBe("modern");
    return {
      client,
      updated,
      async close() {
        await client.close().catch(() => undefined);
        if (pid !== null) await waitFor(() => !alive(pid), 15_000, "the bridge to exit");
      },
    };
  }

  async function httpHost(): Promise<Host> {
    const transport = new StreamableHTTPClientTransport(new URL(http!.url), {
      requestInit: { headers: { authorization: `Bearer ${http!.token}` } },
    });
    const client = new Client({ name: "modern-http", version: "1.0.0" }, MODERN);
    const updated = collect(client);
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe("modern");
    return { client, updated, close: () => client.close().catch(() => undefined) };
  }

  /** `touch`es until the fixture holds `count` URIs subscribed; its answer. */
  async function touchedWith(host: Host, count: number): Promise<void> {
    let last = "";
    await waitFor(
      async () => {
        last = text(await host.client.callTool({ name: "notes__touch", arguments: {} }));
        return last === `touched ${count}`;
      },
      BOUND_MS,
      `the fixture to hold ${count} subscribed (last: ${last})`,
    );
  }

  beforeAll(async () => {
    home.writeConfig({
      notes: {
        command: process.execPath,
        args: [fixture("log-levels.mjs"), "--update-on-subscribe"],
      },
      // 2026-07-28 only: beside it the pool's modern hosts are served in their era (a
      // bridge whose servers all speak only legacy serves them as such a server does direct).
      cached: { command: process.execPath, args: [fixture("modern-cached.mjs")] },
    });
    daemon = await startDaemon(home);
    const pool = await poolClient(home);
    await waitFor(
      async () => (await pool.state()).every((s) => s.status === "ready"),
      30_000,
      "the server to be ready",
    );
    await pool.close();
    http = await httpBridge(home, []);
  }, 60_000);

  afterAll(async () => {
    await http?.stop();
    await daemon?.stop();
    for (const pid of pids) await waitFor(() => !alive(pid), 15_000, "every bridge to exit");
    home.remove();
  });

  it("sends each stdio host resources/updated for the URIs its listen named alone, none to a host that named none, and unsubscribes upstream when the hosts go", async () => {
    const first = await stdioHost("sdk");
    const second = await stdioHost("lean");
    const bystander = await stdioHost("sdk");
    try {
      expect(first.client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
      await first.client.listen({ resourceSubscriptions: ["note://1"] });
      await second.client.listen({ resourceSubscriptions: ["note://2"] });
      await bystander.client.listen({ resourcesListChanged: true });
      // The fixture's updates as it took each subscribe, ahead of its answer.
      await waitFor(() => first.updated.includes("note://1"), BOUND_MS, "note://1 to arrive");
      await waitFor(() => second.updated.includes("note://2"), BOUND_MS, "note://2 to arrive");
      first.updated.length = 0;
      second.updated.length = 0;
      await touchedWith(bystander, 2);
      await waitFor(() => first.updated.includes("note://1"), BOUND_MS, "note://1 to arrive");
      await waitFor(() => second.updated.includes("note://2"), BOUND_MS, "note://2 to arrive");
      // One more round trip on each: what was on its way to them has arrived.
      await first.client.callTool({ name: "notes__say", arguments: { level: "debug", text: "-" } });
      await second.client.callTool({
        name: "notes__say",
        arguments: { level: "debug", text: "-" },
      });
      expect(new Set(first.updated)).toEqual(new Set(["note://1"]));
      expect(new Set(second.updated)).toEqual(new Set(["note://2"]));
      expect(bystander.updated).toEqual([]);
      await first.close();
      await second.close();
      await touchedWith(bystander, 0);
    } finally {
      await first.close();
      await second.close();
      await bystander.close();
    }
  }, 90_000);

  it("holds a URI while one of a connection's listen streams names it, and lets go when the last one is closed", async () => {
    const host = await stdioHost("sdk");
    try {
      const one = await host.client.listen({ resourceSubscriptions: ["note://1"] });
      const both = await host.client.listen({ resourceSubscriptions: ["note://1", "note://2"] });
      expect(both.honoredFilter.resourceSubscriptions).toEqual(["note://1", "note://2"]);
      await touchedWith(host, 2);
      await both.close();
      await touchedWith(host, 1);
      await one.close();
      await touchedWith(host, 0);
    } finally {
      await host.close();
    }
  }, 90_000);

  it("sends an HTTP host resources/updated on its listen stream for the URI it named alone, and unsubscribes upstream when the stream ends", async () => {
    const first = await httpHost();
    const second = await httpHost();
    try {
      expect(first.client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
      const stream = await first.client.listen({ resourceSubscriptions: ["note://1"] });
      await second.client.listen({ resourcesListChanged: true });
      // The fixture's update as it took the subscribe, ahead of its answer.
      await waitFor(() => first.updated.includes("note://1"), BOUND_MS, "note://1 to arrive");
      first.updated.length = 0;
      await touchedWith(second, 1);
      await waitFor(() => first.updated.includes("note://1"), BOUND_MS, "note://1 on a touch");
      await first.client.callTool({ name: "notes__say", arguments: { level: "debug", text: "-" } });
      expect(new Set(first.updated)).toEqual(new Set(["note://1"]));
      expect(second.updated).toEqual([]);
      await stream.close();
      await touchedWith(second, 0);
    } finally {
      await first.close();
      await second.close();
    }
  }, 90_000);
});
