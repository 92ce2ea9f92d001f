import { describe, expect, it } from "vitest";
import { poolSectionProblems } from "../../src/config/pool-section.js";
import { ConnectionCap, RESERVED_SLOTS } from "../../src/daemon/socket/connection-cap.js";

describe("the daemon's connection cap", () => {
  it("counts up to the cap, then reserved slots, then refuses, logging once per burst", () => {
    const logged: string[] = [];
    const cap = new ConnectionCap((line) => logged.push(line), 1_000_000);
    cap.configure(2);
    expect([cap.enter(true), cap.enter(false)]).toEqual(["open", "open"]);
    expect(cap.enter(false)).toBe("refused");
    for (let i = 0; i < RESERVED_SLOTS; i++) expect(cap.enter(true)).toBe("reserved");
    expect(cap.enter(true)).toBe("refused");
    expect(cap.state()).toEqual({ open: 2 + RESERVED_SLOTS, max: 2, refused: 2, perProcess: 1 });
    expect(logged).toEqual([
      "mcpool: too many connections (2 of 2); close some or raise mcpool.maxConnections in mcp.json (refusing new connections until some close)",
    ]);
    for (let i = 0; i < RESERVED_SLOTS + 1; i++) cap.leave();
    expect(cap.enter(false)).toBe("open");
    cap.enter(false);
    expect(logged).toHaveLength(2);
  });

  it("never passes half the open-file limit, and says which bound it met", () => {
    const cap = new ConnectionCap(() => undefined, 128);
    expect(cap.max).toBe(64);
    cap.configure(10);
    expect(cap.max).toBe(10);
    cap.configure(undefined);
    expect(cap.max).toBe(64);
    expect(cap.message()).toContain("half the daemon's open-file limit of 128");
    expect(cap.message()).toContain("ulimit -n");
  });

  it("gives one process a quarter of the cap unless mcpool.maxConnectionsPerProcess says", () => {
    const cap = new ConnectionCap(() => undefined, 1_000_000);
    expect(cap.perProcess).toBe(250);
    cap.configure(40);
    expect(cap.perProcess).toBe(10);
    cap.configure(40, 30);
    expect(cap.perProcess).toBe(30);
    cap.configure(40, 400);
    expect(cap.perProcess).toBe(40);
    expect(poolSectionProblems({ maxConnectionsPerProcess: 0 })[0]?.message).toContain(
      "at least 1",
    );
  });

  it("is a key of the mcpool section that must be at least 1", () => {
    expect(poolSectionProblems({ maxConnections: 50 })).toEqual([]);
    expect(poolSectionProblems({ maxConnections: 0 })[0]?.message).toContain("at least 1");
    expect(poolSectionProblems({ maxConnection: 5 })[0]?.message).toContain("maxConnections");
  });
});
