/**
 * The rooms of each part, lowest first (docs/architecture.md, docs/contributing.md). A file in
 * a room imports its own room and the rooms below it, never one above; a part's own files
 * (its facade: `src/pool/pool.ts`, `src/daemon/daemon.ts`, `src/cli/main.ts`, …) may import
 * any of its rooms, and no room imports them. A part not named here has no rooms: every file
 * is its facade. eslint.config.js turns this table into no-restricted-imports rules, and
 * test/unit/import-graph.test.ts walks the real graph against it, so a new file in a room is
 * covered by both, and a new folder fails until it is placed here.
 */
export const ROOMS = {
  "src/pool": [
    "core",
    "watch",
    "transport",
    "mcp",
    "auth",
    "server",
    "catalog",
    "calls",
    "conversations",
    "reconcile",
  ],
  "src/daemon": ["process", "config", "stores", "socket", "handover", "handlers"],
  "src/bridge": ["lean", "core", "catalog", "modern", "legacy", "fronts"],
  "src/cli": ["output", "service", "hosts", "commands"],
};

/** Every part of the tree whose folders the stack covers. */
export const PARTS = [
  "src/config",
  "src/pool",
  "src/daemon",
  "src/bridge",
  "src/cli",
  "src/demo",
  "src/testing",
  "client/src",
  "protocol/src",
];
