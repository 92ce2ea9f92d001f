/**
 * Connections opened ahead for a 2025-11-25 host whose roots are not known yet
 * (src/pool/prepared-children.ts), over the SDK's in-memory pair: one per row and capability
 * set, its handshake done with the child's capabilities and its `initialized` held until the
 * child that takes it sends it; held by every session that asked, and ended once the last
 * lets go, unless a child took it; only for a stdio row known to speak 2025-11-25 and up.
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { describe, expect, it } from "vitest";
import { PreparedChildren } from "../../src/pool/prepared-children.js";
import type { EntryContext } from "../../src/pool/server/context.js";
import type { ServerEntry } from "../../src/pool/server/entry.js";
import { waitFor } from "../helpers/processes.js";

/** What the in-memory servers saw: how many were started, initialized, closed. */
interface Seen {
  started: number;
  initialized: number;
  closed: number;
}

function world(): { prepared: PreparedChildren; seen: Seen; ended: string[] } {
  const seen: Seen = { started: 0, initialized: 0, closed: 0 };
  const ended: string[] = [];
  const createTransport = async () => {
    seen.started += 1;
    const server = new Server({ name: "fs", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.oninitialized = () => {
      seen.initialized += 1;
    };
    server.onclose = () => {
      seen.closed += 1;
    };
    const [client, side] = InMemoryTransport.createLinkedPair();
    await server.connect(side);
    return client;
  };
  const context = {
    clientInfo: { name: "mcpool", version: "0.0.0" },
    capabilities: {},
    createTransport,
    transportContext: {},
    connectTimeoutMs: 5_000,
    log: {},
  } as unknown as EntryContext;
  return { prepared: new PreparedChildren(context, (id) => ended.push(id)), seen, ended };
}

/** A row's entry as prepare() reads it. */
function entry(id: string, fields: Record<string, unknown> = {}): ServerEntry {
  return {
    id,
    row: { id, transport: "stdio", command: "fs" },
    verdict: { era: "legacy", at: Date.now() },
    status: "ready",
    ...fields,
  } as unknown as ServerEntry;
}

const ROOTS = { roots: [] };

describe("connections opened ahead of a host's roots", () => {
  it("opens one per row and capability set for the hosts that ask together, its initialized held until a child takes it", async () => {
    const { prepared, seen, ended } = world();
    const fs = entry("fs");
    const [a, b] = await Promise.all([
      prepared.prepare([fs], ROOTS, "host-a"),
      prepared.prepare([fs], ROOTS, "host-b"),
    ]);
    expect([a, b]).toEqual([["fs"], ["fs"]]);
    expect(prepared.stateOf("fs")).toEqual([
      { capabilities: "roots", status: "ready", awaitingRoots: true },
    ]);
    expect(seen).toEqual({ started: 1, initialized: 0, closed: 0 });

    const taken = await prepared.take("fs", "roots");
    expect(taken).toBeDefined();
    expect(prepared.take("fs", "roots")).toBeUndefined();
    expect(prepared.count("fs")).toBe(0);
    expect(ended).toEqual([]);
    await taken!.client.initialized();
    await waitFor(() => seen.initialized === 1, 5_000, "the server's initialized");
    // Taken: the holders letting go end nothing.
    prepared.release("host-a");
    prepared.release("host-b");
    expect(seen.closed).toBe(0);
    await taken!.client.close();
  });

  it("ends one no child took once every session holding it lets go", async () => {
    const { prepared, seen, ended } = world();
    const fs = entry("fs");
    await prepared.prepare([fs], ROOTS, "host-a");
    await prepared.prepare([fs], ROOTS, "host-b");
    prepared.release("host-a");
    expect(prepared.count("fs")).toBe(1);
    expect(seen.closed).toBe(0);
    prepared.release("host-b");
    expect(prepared.count("fs")).toBe(0);
    // Its process ending makes room under the row's cap.
    expect(ended).toEqual(["fs"]);
    await waitFor(() => seen.closed === 1, 5_000, "the connection opened ahead to close");
    expect(seen.initialized).toBe(0);
  });

  it("opens another for another capability set, and ends a row's when it ends", async () => {
    const { prepared, seen } = world();
    const fs = entry("fs");
    await prepared.prepare([fs], ROOTS, "host-a");
    await prepared.prepare([fs], { sampling: true, roots: [] }, "host-b");
    expect(prepared.stateOf("fs").map((state) => state.capabilities)).toEqual([
      "roots",
      "sampling,roots",
    ]);
    // What a child of one set counts against the cap: the other set's.
    expect(prepared.count("fs", "roots")).toBe(1);
    prepared.end("fs");
    expect(prepared.count("fs")).toBe(0);
    await waitFor(() => seen.closed === 2, 5_000, "both to close");
  });

  it("opens nothing for a row that is not a stdio server known to speak 2025-11-25, up or idle", async () => {
    const { prepared, seen } = world();
    const rows = [
      entry("remote", { row: { id: "remote", transport: "http", url: "http://x" } }),
      entry("unknown", { verdict: undefined }),
      entry("modern", { verdict: { era: "modern", at: Date.now() } }),
      entry("down", { status: "error" }),
    ];
    expect(await prepared.prepare(rows, ROOTS, "host-a")).toEqual([]);
    expect(await prepared.prepare([entry("idle", { status: "idle" })], ROOTS, "host-a")).toEqual([
      "idle",
    ]);
    expect(seen.started).toBe(1);
    prepared.end();
  });
});
