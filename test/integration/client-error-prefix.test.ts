/**
 * A server's own JSON-RPC error through the client library says `MCP error <code>: ` once.
 * An SDK v1 server sends its McpError's message, prefix and all: an SDK v2 client shows that
 * as it came (the prefix once), an SDK v1 client adds its own (twice). The library's message
 * is the v2 client's, direct being the oracle; a host through `mcpool bridge --server ID`
 * still gets exactly what it gets direct, whichever SDK it is.
 */
import { describe, expect, it } from "vitest";
import { McpPoolError } from "mcpool-client";
import { bridgeCommand, stringEnv } from "../helpers/bridge.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture } from "../helpers/processes.js";
import { connectHost, type ClientKind, type Host, type Target } from "../differential/host.js";

const fleet = useFleet();
const SERVER = { command: process.execPath, args: [fixture("tasks-server.mjs")] };
const UNKNOWN = { taskId: "no-such-task" };

/** The refusal `request` ends in: its code and message. */
async function refusal(request: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  const error = (await request.then(
    () => new Error("answered"),
    (e: unknown) => e,
  )) as { code?: unknown; message: string };
  return { code: error.code, message: error.message };
}

async function asked(client: ClientKind, target: Target, method: string) {
  const host: Host = await connectHost({ client, capabilities: "none", root: "/" }, target);
  try {
    return await refusal(host.request(method, UNKNOWN));
  } finally {
    await host.close();
  }
}

describe("a server's error through the client library", () => {
  it("says the MCP error prefix once, as an SDK v2 client shows it direct; bridges keep direct's", async () => {
    const home = fleet.home("mcpool-error-prefix-");
    home.writeConfig({ tasks: SERVER });
    await fleet.daemon(home);
    const lib = await fleet.agent(home, "lib");
    const direct: Target = { kind: "stdio", ...SERVER, env: stringEnv(process.env) };
    const bridged: Target = {
      kind: "stdio",
      ...bridgeCommand(home, ["--server", "tasks", "--socket", home.socketPath], "sdk"),
      env: stringEnv(home.env),
    };
    for (const method of ["tasks/get", "tasks/cancel"] as const) {
      const v2 = await asked("v2", direct, method);
      const got = await lib.tasks.request("tasks", method, UNKNOWN).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(got).toBeInstanceOf(McpPoolError);
      const error = got as McpPoolError;
      expect(error.code).toBe("tool-error");
      expect(error.detail.mcpCode).toBe(v2.code);
      expect(error.message).toBe(v2.message);
      expect(error.message.split(`MCP error ${String(v2.code)}:`)).toHaveLength(2);
      expect(error.detail.mcpMessage).toBe(v2.message);
      // Through the bridge, each SDK's host: what it gets direct (v1's prefix twice included).
      for (const client of ["v1", "v2"] as const) {
        expect(await asked(client, bridged, method)).toEqual(await asked(client, direct, method));
      }
    }
  }, 90_000);
});
