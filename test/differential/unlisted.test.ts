/**
 * A tool name the host's session was not offered, against direct: through a one-server entry
 * (`--server ID`: the perl relay, the lean bridge, the full CLI's, `--http`) the server answers
 * it, as it would the host direct — server-everything's `get-roots-list`, which it lists only
 * to a client declaring roots, and a name no server has. Both eras' hosts: SDK v1 (2025-11-25)
 * and SDK v2 against server-everything, and SDK v2 against a 2026-07-28-only server. A tool
 * the row hides stays refused by the pool, as an unknown tool.
 */
import { describe, expect, it } from "vitest";
import { testHome } from "../helpers/daemon.js";
import { openHost, type Entry } from "./entries.js";
import type { ClientKind, HostSpec } from "./host.js";
import { compare, normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { matrixServers } from "./servers.js";
import { step, type Step } from "./session.js";

const UNLISTED = ["get-roots-list", "no-such-tool"];
/** A tool server-everything lists that the row hides from hosts. */
const HIDDEN = "echo";
const ENTRIES: readonly Entry[] = ["perl", "lean", "cli", "http"];
const CELLS: readonly { server: string; client: ClientKind }[] = [
  { server: "everything", client: "v1" },
  { server: "everything", client: "v2" },
  { server: "modern", client: "v2" },
];

describe("a tool name the host was not offered, against direct", () => {
  const home = testHome("mcpool-differential-unlisted-");
  const servers = matrixServers(home.dir).filter((s) => CELLS.some((c) => c.server === s.id));
  pooling(home, servers, (s) => (s.id === "everything" ? { hiddenTools: [HIDDEN] } : {}));

  /** The unlisted names called on `entry` by a host of `spec`, as steps. */
  async function calls(server: string, spec: HostSpec, entry: Entry): Promise<Step[]> {
    const host = await openHost(
      home,
      servers.find((s) => s.id === server)!,
      spec,
      entry,
    );
    try {
      const out: Step[] = [{ op: "handshake", result: { era: host.era } }];
      for (const name of UNLISTED)
        out.push(await step(host, "tools/call", { name, arguments: {} }));
      return out;
    } finally {
      await host.close();
    }
  }

  it.each(CELLS)(
    "gives an SDK $client host of $server what the server answers direct",
    async ({ server, client }) => {
      const spec: HostSpec = { client, capabilities: "none", root: projectOf(home, client) };
      const direct = normalise(await calls(server, spec, "direct"));
      const found: string[] = [];
      for (const entry of ENTRIES) {
        const pooled = normalise(await calls(server, spec, entry));
        found.push(...compare(direct, pooled).map((d) => `${entry}: ${d}`));
      }
      expect(found.join("\n")).toBe("");
    },
    120_000,
  );

  it.each(ENTRIES)(
    "keeps a tool the row hides refused through the %s entry",
    async (entry) => {
      const spec: HostSpec = { client: "v1", capabilities: "none", root: projectOf(home, "v1") };
      const host = await openHost(
        home,
        servers.find((s) => s.id === "everything")!,
        spec,
        entry,
      );
      try {
        const refused = await step(host, "tools/call", { name: HIDDEN, arguments: {} });
        // Refused by the pool as today: an SDK v1 server's own unknown-tool error, as the bridge sends it.
        expect(refused.error?.code).toBe(-32602);
        expect(refused.error?.message).toContain(`Unknown tool: ${HIDDEN}`);
      } finally {
        await host.close();
      }
    },
    60_000,
  );
});
