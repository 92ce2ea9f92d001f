/**
 * The hand-over's snapshot as the new daemon reads it: a version it does not know, or
 * something that is not a snapshot, is a reason to start cold and say why — never read on.
 */
import { describe, expect, it } from "vitest";
import {
  childLabel,
  LISTEN_FD,
  nameOf,
  readSnapshot,
  renumbered,
  SNAPSHOT_VERSION,
  untakenLabels,
  type HandedServer,
} from "../../src/daemon/handover/snapshot.js";

const server = (serverId: string, fds: [number, number, number]): HandedServer => ({
  serverId,
  row: { id: serverId, transport: "stdio", command: "node", args: [] } as HandedServer["row"],
  child: {
    pid: 42,
    fds,
    unread: "",
    session: { protocolVersion: "2025-11-25", capabilities: {}, nextId: 7 },
  },
});

const snapshot = {
  version: SNAPSHOT_VERSION,
  from: { pid: 1, version: "0.1.0", startedAt: 0 },
  at: 0,
  inherited: false,
  marks: ["m"],
  servers: [],
};

describe("the hand-over snapshot", () => {
  it("reads a snapshot of its own version", () => {
    expect(readSnapshot(JSON.stringify(snapshot))).toEqual({ snapshot });
  });

  it("reads the previous version's snapshot, which hands over no profile's child", () => {
    const previous = { ...snapshot, version: 1 };
    expect(readSnapshot(JSON.stringify(previous))).toEqual({ snapshot: previous });
  });

  it("reads a version 2 snapshot, whose sessions are rows' own", () => {
    const previous = { ...snapshot, version: 2 };
    expect(readSnapshot(JSON.stringify(previous))).toEqual({ snapshot: previous });
  });

  it("writes a version a build that keyed sessions by row alone refuses, so it starts cold", () => {
    // Such a build reads versions 1 and 2 only: a conversation's session must never reach it.
    expect([1, 2]).not.toContain(SNAPSHOT_VERSION);
  });

  it("refuses a version it does not know, naming those it reads", () => {
    const read = readSnapshot(JSON.stringify({ ...snapshot, version: SNAPSHOT_VERSION + 1 }));
    expect(read).toEqual({
      problem: `the snapshot's version ${SNAPSHOT_VERSION + 1} is not one this mcpool reads (1, 2, ${SNAPSHOT_VERSION})`,
    });
  });

  it("names a row's own child by its row, another by its row and key, a conversation's without it", () => {
    const profile = { key: "roots:file:///p", profile: { roots: [] }, asksRoots: true };
    const conversation = { key: '["","me","c1"]' };
    expect(nameOf(server("fs", [5, 6, 7]))).toBe("fs");
    expect(nameOf({ ...server("fs", [5, 6, 7]), profile })).toBe("fs for roots:file:///p");
    expect(nameOf({ ...server("c", [5, 6, 7]), conversation })).toBe(
      'c for conversation ["","me","c1"]',
    );
    expect(childLabel({ ...server("c", [5, 6, 7]), conversation })).toBe("c for a conversation");
  });

  it("tells the children not taken without who is talking", () => {
    const conversation = { key: '["","me","c1"]' };
    const handed = [
      server("fs", [5, 6, 7]),
      { ...server("c", [8, 9, 10]), conversation },
      server("kept", [11, 12, 13]),
    ];
    const untaken = new Set(["fs", 'c for conversation ["","me","c1"]']);
    expect(untakenLabels(handed, untaken)).toEqual(["fs", "c for a conversation"]);
  });

  it("refuses what is not JSON, not an object, or lacks its parts", () => {
    expect(readSnapshot("{go")).toEqual({
      problem: "the snapshot is not JSON (at character 1 of 3)",
    });
    expect(readSnapshot("[]")).toEqual({ problem: "the snapshot is not a JSON object" });
    expect(readSnapshot(JSON.stringify({ version: SNAPSHOT_VERSION }))).toEqual({
      problem: "the snapshot lacks its servers, marks or origin",
    });
  });

  it("tells where a snapshot stops being JSON, never what it holds there", () => {
    const canary = "canary-7f3e1d-secret";
    const row = JSON.stringify({ env: { TOKEN: canary } });
    // A torn line, text after the value, a bare word, a value cut short: every parser message.
    for (const text of [
      `${row.slice(0, -2)} x`,
      `${row} ${canary}`,
      `${canary} ${row}`,
      row.slice(0, -3),
    ]) {
      const read = readSnapshot(text);
      expect(read).toMatchObject({ problem: expect.stringContaining("not JSON") });
      expect(JSON.stringify(read)).not.toContain(canary);
      expect(JSON.stringify(read)).not.toContain("canary");
    }
  });

  it("numbers each child's fds as the new process receives them, after the listener", () => {
    const moved = renumbered([server("a", [20, 21, 22]), server("b", [30, 31, 32])]);
    expect(moved.map((s) => s.child.fds)).toEqual([
      [LISTEN_FD + 1, LISTEN_FD + 2, LISTEN_FD + 3],
      [LISTEN_FD + 4, LISTEN_FD + 5, LISTEN_FD + 6],
    ]);
  });
});
