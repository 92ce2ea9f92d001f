/**
 * A lean session's list change, said in its host's era: unsolicited to a legacy host, on
 * each acknowledged listen subscription that took the kind to a 2026-07-28 host, and not at
 * all to a modern host that listens for nothing.
 */
import { describe, expect, it } from "vitest";
import { HostEra, SUBSCRIPTION_ID_KEY } from "../../src/bridge/lean/host-era.js";

const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };
const ack = (id: string | number, notifications: object) => ({
  jsonrpc: "2.0",
  method: "notifications/subscriptions/acknowledged",
  params: { notifications, _meta: { [SUBSCRIPTION_ID_KEY]: id } },
});
const lines = (era: HostEra, kind: "tools" | "prompts" | "resources") =>
  era.listChanged(kind).map((l) => JSON.parse(l) as unknown);

describe("a lean session's list change in its host's era", () => {
  it("is unsolicited to a legacy host", () => {
    const era = new HostEra();
    era.fromHost({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25" } });
    expect(lines(era, "prompts")).toEqual([
      { jsonrpc: "2.0", method: "notifications/prompts/list_changed" },
    ]);
  });

  it("goes only to a modern host's subscriptions that took the kind, naming each", () => {
    const era = new HostEra();
    era.fromHost({ id: 1, method: "server/discover", params: { _meta: META } });
    era.fromDaemon({ id: 1, result: {} });
    expect(lines(era, "tools")).toEqual([]);
    era.fromDaemon(ack("a", { toolsListChanged: true }));
    era.fromDaemon(ack(7, { promptsListChanged: true }));
    expect(lines(era, "tools")).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
        params: { _meta: { [SUBSCRIPTION_ID_KEY]: "a" } },
      },
    ]);
    // Cancelled by the host, or closed by the daemon (its answer): no longer told.
    era.fromHost({ method: "notifications/cancelled", params: { requestId: "a" } });
    era.fromDaemon({ id: 7 });
    expect(lines(era, "tools")).toEqual([]);
    expect(lines(era, "prompts")).toEqual([]);
  });

  it("takes a host whose discovery was refused as legacy", () => {
    const era = new HostEra();
    era.fromHost({ id: 1, method: "server/discover", params: { _meta: META } });
    era.fromDaemon({ id: 1, error: { code: -32601 } });
    expect(lines(era, "tools")).toHaveLength(1);
  });

  it("keeps a host whose discovery was refused legacy while it goes on in the envelope", () => {
    const era = new HostEra();
    era.fromHost({ id: 1, method: "server/discover", params: { _meta: META } });
    era.fromDaemon({ id: 1, error: { code: -32601 } });
    era.fromHost({ id: 2, method: "tools/list", params: { _meta: META } });
    expect(era.isModern).toBe(false);
    expect(lines(era, "tools")).toEqual([
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    ]);
  });

  it("keeps an initialized host legacy whatever envelope its later requests carry", () => {
    const era = new HostEra();
    era.fromHost({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25" } });
    era.fromHost({ id: 2, method: "tools/call", params: { name: "x", _meta: META } });
    expect(era.isModern).toBe(false);
  });

  it("takes a dual-era host that probed and then initialized as legacy", () => {
    const era = new HostEra();
    era.fromHost({ id: 1, method: "server/discover", params: { _meta: META } });
    era.fromDaemon({ id: 1, result: {} });
    era.fromHost({ id: 2, method: "initialize", params: { protocolVersion: "2025-11-25" } });
    expect(lines(era, "resources")).toHaveLength(1);
  });

  it("takes a host whose requests carry the 2026-07-28 envelope as modern", () => {
    const era = new HostEra();
    expect(era.isModern).toBe(false);
    era.fromHost({ id: 1, method: "tools/list", params: { _meta: META } });
    expect(era.isModern).toBe(true);
    era.fromDaemon(ack("s", { toolsListChanged: true }));
    expect(lines(era, "tools")).toHaveLength(1);
  });

  it("tells nothing on a subscription this side ended", () => {
    const era = new HostEra();
    era.fromHost({ id: 1, method: "server/discover", params: { _meta: META } });
    era.fromDaemon({ id: 1, result: {} });
    era.fromDaemon(ack("s", { toolsListChanged: true }));
    era.listenEnded("s");
    expect(lines(era, "tools")).toEqual([]);
  });
});
