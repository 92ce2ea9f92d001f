/**
 * Direct is the oracle: each cell's scripted session (session.ts) runs against its server
 * spawned by the host itself and through one way into a real daemon pooling the same server,
 * and the two transcripts, normalised, must be equal but for EXPECTED_DIFFERENCES
 * (normalise.ts). The cells are in cells.ts; README.md says why the matrix has this shape.
 * One daemon for the file; a server's cells run one after another, servers side by side.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { testHome } from "../helpers/daemon.js";
import { CELLS } from "./cells.js";
import { cellName, pooling, runServer, type Cell } from "./run.js";
import { matrixServers } from "./servers.js";

/**
 * Bound on the whole matrix on a loaded two-core machine. server-everything's sessions run one
 * after another, and each runs its research task, four one-second stages by the server's own
 * clock: 21 sessions add some 85 s that no machine makes shorter.
 */
const MATRIX_TIMEOUT_MS = 480_000;

describe("direct and through the pool, the same session", () => {
  const home = testHome("mcpool-differential-");
  const servers = matrixServers(home.dir).filter((s) => CELLS.some((c) => c.server === s.id));
  const found = new Map<string, string[]>();
  pooling(home, servers);

  beforeAll(async () => {
    const results = await Promise.all(
      servers.map((server) =>
        runServer(
          home,
          server,
          CELLS.filter((c) => c.server === server.id),
        ),
      ),
    );
    for (const result of results) {
      for (const [cell, lines] of result) found.set(cellName(cell), lines);
    }
  }, MATRIX_TIMEOUT_MS);

  it.each(CELLS.map((cell): [string, Cell] => [cellName(cell), cell]))("%s", (name) => {
    expect(found.get(name)?.join("\n")).toBe("");
  });
});
