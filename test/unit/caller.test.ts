/**
 * The calling agent a request names: the wire's check of a `caller`, the level
 * filter, the caller a bridge makes of what a host said of itself, and what the pool tells
 * a modern server a call is for.
 */
import { describe, expect, it } from "vitest";
import { callerProblem, MAX_CLIENT_INFO_CHARS, passesLevel } from "mcpool-protocol";
import { hostCaller } from "../../src/bridge/core/session.js";
import { upstreamCaller } from "../../src/pool/calls/options.js";

describe("callerProblem", () => {
  it("lets through no caller, a level alone, and a clientInfo with name and version", () => {
    expect(callerProblem(undefined)).toBeUndefined();
    expect(callerProblem({ logLevel: "debug" })).toBeUndefined();
    expect(
      callerProblem({ clientInfo: { name: "a", version: "1", title: "A", websiteUrl: "x" } }),
    ).toBeUndefined();
  });

  it("names what is wrong: the shape, the level, the name, the title and the size", () => {
    expect(callerProblem("x")).toBe(`"caller" must be an object`);
    expect(callerProblem({ logLevel: "loud" })).toMatch(/^"caller.logLevel" must be one of debug/);
    expect(callerProblem({ rootsListChanged: "yes" })).toBe(
      `"caller.rootsListChanged" must be true or false`,
    );
    expect(callerProblem({ clientInfo: [] })).toBe(`"caller.clientInfo" must be an object`);
    expect(callerProblem({ clientInfo: { name: "a" } })).toMatch(/string "name" and "version"/);
    expect(callerProblem({ clientInfo: { name: "a", version: "1", title: 2 } })).toMatch(
      /title" must be a string/,
    );
    const big = { name: "a", version: "1", description: "x".repeat(MAX_CLIENT_INFO_CHARS) };
    expect(callerProblem({ clientInfo: big })).toMatch(/is \d+ characters as JSON; at most 4096/);
  });
});

describe("passesLevel", () => {
  it("passes a message at or above the threshold, everything without one, and unknown levels", () => {
    expect(passesLevel("warning", "info")).toBe(true);
    expect(passesLevel("info", "info")).toBe(true);
    expect(passesLevel("debug", "info")).toBe(false);
    expect(passesLevel("debug", undefined)).toBe(true);
    expect(passesLevel("shouting", "emergency")).toBe(true);
  });
});

describe("hostCaller", () => {
  it("keeps a host's clientInfo and level, and leaves out what the daemon would refuse", () => {
    expect(hostCaller({ name: "h", version: "1" }, "info")).toEqual({
      clientInfo: { name: "h", version: "1" },
      logLevel: "info",
    });
    expect(hostCaller(undefined, undefined)).toEqual({});
    const big = { name: "h", version: "1", description: "x".repeat(MAX_CLIENT_INFO_CHARS) };
    expect(hostCaller(big, "loud")).toEqual({});
  });

  it("says when the host's roots tell of their changes, and only then", () => {
    expect(hostCaller(undefined, undefined, { roots: { listChanged: true } })).toEqual({
      rootsListChanged: true,
    });
    expect(hostCaller(undefined, undefined, { roots: {} })).toEqual({});
    expect(hostCaller(undefined, undefined, { sampling: {} })).toEqual({});
  });
});

describe("upstreamCaller", () => {
  it("is the pool's own for a call that names neither profile nor caller", () => {
    expect(upstreamCaller({})).toEqual({});
  });

  it("names the caller's clientInfo and level, with no capabilities of a profile it lacks", () => {
    expect(upstreamCaller({ caller: { clientInfo: { name: "a", version: "1" } } })).toEqual({
      caller: { clientInfo: { name: "a", version: "1" } },
    });
    expect(upstreamCaller({ caller: { logLevel: "error" } })).toEqual({
      caller: { logLevel: "error" },
    });
  });

  it("adds the profile's capabilities, with roots when they are asked per call", () => {
    const onRoots = () => Promise.resolve({ roots: [] });
    const { caller } = upstreamCaller({ profile: { sampling: true }, onRoots });
    expect(caller?.capabilities).toMatchObject({ sampling: {}, roots: {} });
    expect(caller).not.toHaveProperty("logLevel");
  });

  it("tells the server the host's roots say when they change, as the host declared", () => {
    const onRoots = () => Promise.resolve({ roots: [] });
    const roots = [{ uri: "file:///p" }];
    const listed = upstreamCaller({ profile: { roots }, caller: { rootsListChanged: true } });
    expect(listed.caller?.capabilities).toEqual({ roots: { listChanged: true } });
    const asked = upstreamCaller({ profile: {}, onRoots, caller: { rootsListChanged: true } });
    expect(asked.caller?.capabilities).toEqual({ roots: { listChanged: true } });
    // No roots declared: nothing to say of them.
    const none = upstreamCaller({ profile: {}, caller: { rootsListChanged: true } });
    expect(none.caller?.capabilities).toEqual({});
  });
});
