/**
 * The matrix's cells. SHAPE is the whole matrix README.md describes; CELLS, the ones that run,
 * are those of SHAPE whose session through the pool is today what it is direct.
 */
import { ENTRIES } from "./entries.js";
import { CAPABILITY_SETS, CLIENTS, type CapabilitySet, type ClientKind } from "./host.js";
import type { Cell } from "./run.js";

export const SERVERS = [
  "everything",
  "filesystem",
  "memory",
  "conformance",
  "dual",
  "modern",
  "legacy",
];

/**
 * Every server × every entry with SDK v2 asking; every server × every host kind on lean and
 * --http. But a 2025-11-25 host and a 2026-07-28-only server: direct they cannot speak (the
 * server refuses `initialize`), so there is no oracle — through the pool they can.
 */
export const SHAPE: Cell[] = SERVERS.flatMap((server) => [
  ...ENTRIES.map((entry): Cell => ({ server, client: "v2", capabilities: "asks", entry })),
  ...CLIENTS.flatMap((client: ClientKind) =>
    CAPABILITY_SETS.flatMap((capabilities: CapabilitySet) =>
      (["lean", "http"] as const)
        .filter(() => !(client === "v2" && capabilities === "asks"))
        .filter(() => !(client === "v1" && server === "modern"))
        .map((entry): Cell => ({ server, client, capabilities, entry })),
    ),
  ),
]);

const cell = (name: string): Cell => {
  const found = SHAPE.find((c) => `${c.server} ${c.client} ${c.capabilities} ${c.entry}` === name);
  if (found === undefined) throw new Error(`no cell ${name} in the matrix's shape`);
  return found;
};

export const CELLS: Cell[] = [
  "conformance v1 asks http",
  "conformance v1 asks lean",
  "conformance v1 none http",
  "conformance v1 none lean",
  "conformance v1 roots http",
  "conformance v1 roots lean",
  "conformance v2 asks cli",
  "conformance v2 asks http",
  "conformance v2 asks lean",
  "conformance v2 asks library",
  "conformance v2 asks perl",
  "conformance v2 none http",
  "conformance v2 none lean",
  "conformance v2 roots http",
  "conformance v2 roots lean",
  "dual v1 asks http",
  "dual v1 asks lean",
  "dual v1 none http",
  "dual v1 none lean",
  "dual v1 roots http",
  "dual v1 roots lean",
  "dual v2 asks cli",
  "dual v2 asks http",
  "dual v2 asks lean",
  "dual v2 asks library",
  "dual v2 asks perl",
  "dual v2 none http",
  "dual v2 none lean",
  "dual v2 roots http",
  "dual v2 roots lean",
  "everything v1 asks http",
  "everything v1 asks lean",
  "everything v1 none http",
  "everything v1 none lean",
  "everything v1 roots http",
  "everything v1 roots lean",
  "everything v2 asks cli",
  "everything v2 asks http",
  "everything v2 asks lean",
  "everything v2 asks library",
  "everything v2 asks perl",
  "everything v2 none http",
  "everything v2 none lean",
  "everything v2 roots http",
  "everything v2 roots lean",
  "filesystem v1 asks http",
  "filesystem v1 asks lean",
  "filesystem v1 none http",
  "filesystem v1 none lean",
  "filesystem v1 roots http",
  "filesystem v1 roots lean",
  "filesystem v2 asks cli",
  "filesystem v2 asks http",
  "filesystem v2 asks lean",
  "filesystem v2 asks library",
  "filesystem v2 asks perl",
  "filesystem v2 none http",
  "filesystem v2 none lean",
  "filesystem v2 roots http",
  "filesystem v2 roots lean",
  "legacy v1 asks http",
  "legacy v1 asks lean",
  "legacy v1 none http",
  "legacy v1 none lean",
  "legacy v1 roots http",
  "legacy v1 roots lean",
  "legacy v2 asks cli",
  "legacy v2 asks http",
  "legacy v2 asks lean",
  "legacy v2 asks library",
  "legacy v2 asks perl",
  "legacy v2 none http",
  "legacy v2 none lean",
  "legacy v2 roots http",
  "legacy v2 roots lean",
  "memory v1 asks http",
  "memory v1 asks lean",
  "memory v1 none http",
  "memory v1 none lean",
  "memory v1 roots http",
  "memory v1 roots lean",
  "memory v2 asks cli",
  "memory v2 asks http",
  "memory v2 asks lean",
  "memory v2 asks library",
  "memory v2 asks perl",
  "memory v2 none http",
  "memory v2 none lean",
  "memory v2 roots http",
  "memory v2 roots lean",
  "modern v2 asks cli",
  "modern v2 asks http",
  "modern v2 asks lean",
  "modern v2 asks library",
  "modern v2 asks perl",
  "modern v2 none http",
  "modern v2 none lean",
  "modern v2 roots http",
  "modern v2 roots lean",
].map(cell);
