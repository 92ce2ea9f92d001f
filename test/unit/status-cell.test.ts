import { describe, expect, it } from "vitest";
import type { ServerState } from "mcpool-protocol";
import { profileLines, statusCell } from "../../src/cli/commands/status.js";

/** A server's state as `status` reads it, with only what the cell looks at. */
function state(fields: Partial<ServerState>): ServerState {
  return {
    id: "broken",
    slug: "broken",
    label: "broken",
    config: {},
    status: "error",
    ...fields,
  } as ServerState;
}

describe("the status cell of `mcpool status`", () => {
  const now = Date.parse("2026-12-06T08:00:00Z");

  it("says how long until the next dial while a backoff holds it", () => {
    expect(statusCell(state({ retryAt: now + 7_500 }), now)).toBe("error, next try in 8s");
    expect(statusCell(state({ status: "unreachable", retryAt: now + 1 }), now)).toBe(
      "unreachable, next try in 1s",
    );
  });

  it("says the word alone once the backoff is over: the next use dials", () => {
    expect(statusCell(state({ retryAt: now }), now)).toBe("error");
    expect(statusCell(state({ retryAt: now - 5_000 }), now)).toBe("error");
    expect(statusCell(state({}), now)).toBe("error");
  });

  it("never gives a time for a server that waits for a sign-in", () => {
    expect(statusCell(state({ status: "auth-required", retryAt: now + 60_000 }), now)).toBe(
      "auth-required",
    );
  });

  it("says how long a starting server has been starting, and its child", () => {
    expect(
      statusCell(state({ status: "connecting", startingSince: now - 12_400, pid: 4242 }), now),
    ).toBe("connecting, starting for 12 s, pid 4242");
  });

  it("says a server whose process is stopped is stopped, whatever its word", () => {
    const resources = { stopped: true, callsLastMinute: 0, errorsLastMinute: 0 } as const;
    const stopped = { resources: { ...resources, callsPerMinute: [], overMemoryRestarts: 0 } };
    expect(statusCell(state({ status: "ready", ...stopped }), now)).toBe("ready, stopped");
    expect(statusCell(state({ status: "ready", stale: true, ...stopped }), now)).toBe(
      "ready (stale), stopped",
    );
    expect(statusCell(state({ status: "ready" }), now)).toBe("ready");
  });
});

describe("the children for host profiles in `mcpool status`", () => {
  it("names each child's project, and one opened ahead for a host whose roots are not known yet", () => {
    const fs = state({
      id: "fs",
      status: "ready",
      profiles: [
        { capabilities: "roots", roots: ["file:///work/a"], status: "ready", pid: 11 },
        { capabilities: "roots", status: "ready", pid: 12, awaitingRoots: true },
      ],
    });
    expect(profileLines([fs])).toEqual([
      "",
      "children for host profiles",
      "  fs  pid 11, declares roots, roots file:///work/a",
      "  fs  pid 12, declares roots, awaiting roots",
    ]);
  });
});
