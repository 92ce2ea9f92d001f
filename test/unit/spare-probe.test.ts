/**
 * When a dial finds a stdio server's era on a spare child: only
 * a stdio row of the pool's own children, `"protocol": "auto"`, with no verdict still
 * believed; the serving child waits for it on a first dial, and an old legacy verdict is
 * served at once with the probe beside it.
 */
import { describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/config/rows.js";
import { LEGACY_VERDICT_MAX_AGE_MS, type EraVerdict } from "../../src/pool/core/era.js";
import type { EntryContext } from "../../src/pool/server/context.js";
import { spareProbeOf } from "../../src/pool/server/spare-probe.js";

const NOW = 1_800_000_000_000;
const stdio = { id: "s", transport: "stdio", command: "node" } as McpServerConfig;
const http = { id: "h", transport: "http", url: "https://example.test/mcp" } as McpServerConfig;
const own = { spareProbe: true, transportContext: {} } as EntryContext;
const modern: EraVerdict = {
  era: "modern",
  version: "2026-07-28",
  discover: { supportedVersions: ["2026-07-28"] },
  at: NOW - 10 * LEGACY_VERDICT_MAX_AGE_MS,
};

describe("the spare child that finds a stdio server's era", () => {
  it("goes first on a dial with no verdict, or one this client cannot use", () => {
    expect(spareProbeOf(stdio, undefined, own, NOW)).toBe("first");
    const foreign = { ...modern, discover: { supportedVersions: ["2027-01-01"] } };
    expect(spareProbeOf(stdio, foreign, own, NOW)).toBe("first");
  });

  it("is not started on a believed verdict: a modern one of any age, a legacy one under 24 h", () => {
    expect(spareProbeOf(stdio, modern, own, NOW)).toBeUndefined();
    const fresh: EraVerdict = { era: "legacy", at: NOW - LEGACY_VERDICT_MAX_AGE_MS + 1 };
    expect(spareProbeOf(stdio, fresh, own, NOW)).toBeUndefined();
  });

  it("runs beside the serving child when a legacy verdict is merely old", () => {
    const old: EraVerdict = { era: "legacy", at: NOW - LEGACY_VERDICT_MAX_AGE_MS };
    expect(spareProbeOf(stdio, old, own, NOW)).toBe("beside");
  });

  it("is never started for a pinned row, an http row, or a transport the pool did not make", () => {
    for (const protocol of ["legacy", "2026-07-28"] as const) {
      expect(spareProbeOf({ ...stdio, protocol }, undefined, own, NOW)).toBeUndefined();
    }
    expect(spareProbeOf({ ...stdio, protocol: "auto" }, undefined, own, NOW)).toBe("first");
    expect(spareProbeOf(http, undefined, own, NOW)).toBeUndefined();
    expect(spareProbeOf(stdio, undefined, {} as EntryContext, NOW)).toBeUndefined();
  });
});
