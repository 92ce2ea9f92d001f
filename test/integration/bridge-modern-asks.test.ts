/**
 * What a modern server asks inside a modern host's request reaches that host (the
 * conformance scenarios basic-list-roots, multiple-input-requests and
 * non-tool-request): a modern-only server (test/fixtures/conformance-modern.mjs) pooled by
 * the real daemon, and SDK v2's Client pinned to 2026-07-28 as the host, through the lean
 * bridge and `mcpool bridge` (stdio). The host's own handlers answer each `input_required`.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODERN, bridgeCommand, stringEnv } from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const ROOT = { uri: "file:///host/project", name: "the host's project" };

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

interface AskedHost {
  client: Client;
  /** The methods the host was asked, in order. */
  asked: string[];
  /** How many times the host sent each request method (a retry counts again). */
  sent: Map<string, number>;
  close(): Promise<void>;
}

describe.each(["lean", "sdk"] as const)(
  "a modern server asking a modern host through the %s bridge",
  (via) => {
    const home = testHome("mcpool-modern-asks-");
    let daemon: RunningDaemon | undefined;
    const pids: number[] = [];

    async function host(): Promise<AskedHost> {
      const transport = new StdioClientTransport({
        ...bridgeCommand(home, ["--server", "fixture"], via),
        env: stringEnv(home.env),
        stderr: "pipe",
      });
      const sent = new Map<string, number>();
      const send = transport.send.bind(transport);
      transport.send = (message: Parameters<typeof send>[0]) => {
        if ("method" in message && "id" in message) {
          sent.set(message.method, (sent.get(message.method) ?? 0) + 1);
        }
        return send(message);
      };
      const client = new Client(
        { name: "asked-host", version: "1.0.0" },
        { ...MODERN, capabilities: { roots: {}, elicitation: {}, sampling: {} } },
      );
      const asked: string[] = [];
      client.setRequestHandler("roots/list", async () => {
        asked.push("roots/list");
        return { roots: [ROOT] };
      });
      client.setRequestHandler("elicitation/create", async () => {
        asked.push("elicitation/create");
        return { action: "accept", content: { name: "Ada", context: "the host's context" } };
      });
      client.setRequestHandler("sampling/createMessage", async () => {
        asked.push("sampling/createMessage");
        return {
          role: "assistant",
          content: { type: "text", text: "Hello there!" },
          model: "test-model",
          stopReason: "endTurn",
        };
      });
      await client.connect(transport);
      const pid = transport.pid;
      if (pid !== null) pids.push(pid);
      expect(client.getProtocolEra()).toBe("modern");
      return {
        client,
        asked,
        sent,
        async close() {
          await client.close().catch(() => undefined);
          if (pid !== null) await waitFor(() => !alive(pid), 15_000, "the bridge to exit");
        },
      };
    }

    beforeAll(async () => {
      home.writeConfig({
        fixture: { command: process.execPath, args: [fixture("conformance-modern.mjs")] },
      });
      daemon = await startDaemon(home);
      const pool = await poolClient(home);
      await waitFor(
        async () => (await pool.state()).every((s) => s.status === "ready" || s.status === "idle"),
        30_000,
        "the server to settle",
      );
      await pool.close();
    }, 60_000);

    afterAll(async () => {
      await daemon?.stop();
      for (const pid of pids) await waitFor(() => !alive(pid), 15_000, "every bridge to exit");
      home.remove();
    });

    it("asks the calling host for its roots when the server's call asks roots/list", async () => {
      const asking = await host();
      try {
        const result = await asking.client.callTool({
          name: "test_input_required_result_list_roots",
          arguments: {},
        });
        expect(asking.asked).toEqual(["roots/list"]);
        expect(text(result)).toBe(`Roots: ${ROOT.uri}`);
      } finally {
        await asking.close();
      }
    }, 60_000);

    it("hands the host every question of one round in one input_required", async () => {
      const asking = await host();
      try {
        const result = await asking.client.callTool({
          name: "test_input_required_result_multiple_inputs",
          arguments: {},
        });
        expect(text(result)).toBe("Hello, Ada!");
        expect([...asking.asked].sort()).toEqual([
          "elicitation/create",
          "roots/list",
          "sampling/createMessage",
        ]);
        // The call and one retry: all three questions came in the first answer.
        expect(asking.sent.get("tools/call")).toBe(2);
      } finally {
        await asking.close();
      }
    }, 60_000);

    it("puts an input_required inside prompts/get to the host that asked for the prompt", async () => {
      const asking = await host();
      try {
        const result = await asking.client.getPrompt({ name: "test_input_required_result_prompt" });
        expect(asking.asked).toEqual(["elicitation/create"]);
        expect(result.messages).toEqual([
          { role: "user", content: { type: "text", text: "Context: the host's context" } },
        ]);
      } finally {
        await asking.close();
      }
    }, 60_000);
  },
);
