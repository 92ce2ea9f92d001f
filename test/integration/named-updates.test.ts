/**
 * A resource update the daemon addresses to a named host reaches that host alone: a lean
 * host on one server's MCP socket and a stock relay host (a plain pipe to the pool's socket,
 * no name line) holding the same URI of test/fixtures/log-levels.mjs each hear one update,
 * as the same session direct hears one. Every scope's bridge hears the shared client's
 * updates; the one addressed to the lean host is not the relay host's.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { scopeSocket, stdioBridge, stringEnv } from "../helpers/bridge.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";

const fleet = useFleet();
const BOUND_MS = 20_000;
const TEST_MS = 90_000;
const server = { command: process.execPath, args: [fixture("log-levels.mjs")] };

/** The URIs `client` is told were updated, as they come. */
function updates(client: Client): string[] {
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
  });
  return updated;
}

/** A stock relay: a plain pipe between stdio and `socket`, as socat or nc would be. */
function pipeTo(socket: string): { command: string; args: string[] } {
  const pipe =
    "const s = require('node:net').connect(process.argv[1]);" +
    "process.stdin.pipe(s); s.pipe(process.stdout); s.on('close', () => process.exit(0));";
  return { command: process.execPath, args: ["-e", pipe, socket] };
}

describe("a resource update addressed to a named host", () => {
  it(
    "reaches the lean host it names and not a stock relay host of another scope: one each, as direct",
    async () => {
      const direct = new Client({ name: "direct", version: "1.0.0" });
      await direct.connect(new StdioClientTransport(server));
      let expected: string[];
      try {
        const heard = updates(direct);
        await direct.subscribeResource({ uri: "note://1" });
        await direct.callTool({ name: "touch", arguments: {} });
        await waitFor(() => heard.length > 0, BOUND_MS, "the update direct");
        await direct.callTool({ name: "subscribes", arguments: {} });
        expected = [...heard];
      } finally {
        await direct.close();
      }
      expect(expected).toEqual(["note://1"]);

      const home = fleet.home();
      home.writeConfig({ talk: server });
      await fleet.daemon(home);
      const pooled = scopeSocket(home, []);
      await waitFor(() => existsSync(pooled), BOUND_MS, "the pool's MCP socket");
      const lean = await stdioBridge(home, ["--server", "talk"], {}, "lean");
      const relay = new Client({ name: "relay", version: "1.0.0" });
      try {
        await relay.connect(
          new StdioClientTransport({ ...pipeTo(pooled), env: stringEnv(home.env) }),
        );
        const leanHeard = updates(lean.client);
        const relayHeard = updates(relay);
        await lean.client.subscribeResource({ uri: "note://1" });
        await relay.subscribeResource({ uri: "note://1" });
        // One update from the server, for the one URI both hold.
        await relay.callTool({ name: "talk__touch", arguments: {} });
        await waitFor(
          () => leanHeard.length > 0 && relayHeard.length > 0,
          BOUND_MS,
          "the update at both hosts",
        );
        // A round trip each: an update still on its way has arrived.
        await lean.client.callTool({ name: "subscribes", arguments: {} });
        await relay.callTool({ name: "talk__subscribes", arguments: {} });
        expect({ lean: leanHeard, relay: relayHeard }).toEqual({
          lean: expected,
          relay: expected,
        });
      } finally {
        await relay.close();
        await lean.close();
      }
    },
    TEST_MS,
  );
});
