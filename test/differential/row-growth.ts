/**
 * Makes the server of the notices tests (test/fixtures/roots-notices.mjs) add a tool on the
 * process that serves a caller naming no host profile: direct, a process of its own (an SDK
 * v1 host declaring nothing); through the pool, the row's own connection (a client library
 * caller, whose requests name no profile). Resolves once the change is known: direct, the
 * host heard it; pooled, the pool lists the new tool (it read the list again).
 */
import { connect } from "mcpool-client";
import { stringEnv } from "../helpers/bridge.js";
import type { TestHome } from "../helpers/daemon.js";
import { waitFor } from "../helpers/processes.js";
import { connectHost } from "./host.js";
import type { MatrixServer } from "./servers.js";

/** How long the change may take to be known, ms. */
const KNOWN_MS = 15_000;

export async function growRow(
  home: TestHome,
  server: MatrixServer,
  pooled: boolean,
): Promise<void> {
  if (!pooled) {
    const env = { ...stringEnv(home.env), ...server.env };
    const target = { kind: "stdio" as const, command: server.command, args: server.args, env };
    const host = await connectHost({ client: "v1", capabilities: "none", root: home.dir }, target);
    try {
      await host.request("tools/call", { name: "grow", arguments: {} });
      const changed = "notifications/tools/list_changed";
      await waitFor(() => host.notices?.includes(changed) === true, KNOWN_MS, "the tool change");
    } finally {
      await host.close();
    }
    return;
  }
  const pool = await connect({ socketPath: home.socketPath, clientName: "differential-grower" });
  try {
    const servers = [server.id];
    const count = async (): Promise<number> => (await pool.tools({ servers })).length;
    const before = await count();
    await pool.call(`${server.id}__grow`, {}, { servers });
    await waitFor(async () => (await count()) > before, KNOWN_MS, "the pool to list the new tool");
  } finally {
    await pool.close();
  }
}
