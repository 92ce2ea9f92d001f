/**
 * A daemon given an `mcp.json` of 10,000 rows (lazy: no children) keeps answering
 * `hello` and `status` while it reads and registers them, and ends up with every row.
 */
import { describe, expect, it } from "vitest";
import { type PoolClient } from "mcpool-client";
import { type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { childrenOf } from "../helpers/processes.js";

const ROWS = 10_000;
/** Bound on each answer while the rows load: generous for a loaded 2-core machine. */
const ANSWER_BOUND_MS = 60_000;

const fleet = useFleet();

function rows(count: number): Record<string, unknown> {
  const servers: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    servers[`row-${i}`] = { command: "node", args: ["server.js", String(i)], lazy: true };
  }
  return servers;
}

const agent = (h: TestHome, name: string): Promise<PoolClient> =>
  fleet.agent(h, name, { connectTimeoutMs: ANSWER_BOUND_MS });

describe("a 10,000-row mcp.json", () => {
  it("is loaded while hello and status are answered, and every row ends up in status", async () => {
    const h = fleet.home("mcpool-scale-");
    // Not listed: a lazy row's tools would be learned by starting it, and these commands
    // are not servers; what this measures is reading and registering the rows. (The
    // daemon takes the section from the file it starts with.)
    h.writeConfig({}, { mcpool: { indexTools: false } });
    const d = await fleet.daemon(h);
    const watcher = await agent(h, "watcher");

    h.writeConfig(rows(ROWS), { mcpool: { indexTools: false } });
    // A new agent right after the save: its hello is answered while the rows load.
    const late = await agent(h, "late");
    expect((await late.status()).pid).toBe(d.pid);

    const deadline = Date.now() + ANSWER_BOUND_MS;
    let status = await watcher.status();
    while (status.servers.length < ROWS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = await watcher.status();
    }
    expect(status.config.ok).toBe(true);
    expect(status.config.problems).toEqual([]);
    expect(status.servers).toHaveLength(ROWS);
    expect(status.servers[0]?.id).toBe("row-0");
    expect(status.servers[ROWS - 1]?.id).toBe(`row-${ROWS - 1}`);
    expect(childrenOf(d.pid)).toEqual([]);
    // And a hello after the load, on a fresh connection.
    await (await agent(h, "after")).close();
  });
});
