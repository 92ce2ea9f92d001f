/**
 * A legacy (2025-11-25) host on a server that speaks both eras, its row on `auto` (the pool
 * holds it in 2026-07-28): direct, the host's `initialize` opens a legacy session, so the
 * server sees the legacy era and the host's own capabilities, and answers a question the host
 * cannot take with its own tool error. Through `mcpool bridge --server ID` the pool serves such
 * a host from a child in the legacy era — over stdio (test/fixtures/dual-stdio.mjs) and over
 * Streamable HTTP (modern-http.mjs with MODERN_ERAS=both: a second session, in the legacy era)
 * — while the row's own connection stays modern.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { client, startDaemon, testHome, type RunningDaemon } from "../helpers/daemon.js";
import { stdioBridge } from "../helpers/bridge.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

/** The HTTP fixture speaking both eras, once it says where it listens. */
async function dualHttp(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [fixture("modern-http.mjs")], {
    env: { ...process.env, MODERN_ERAS: "both" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  await waitFor(() => /listening \S+/.test(out), 10_000, "the HTTP fixture to listen");
  return { url: /listening (\S+)/.exec(out)![1] as string, child };
}

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

describe("a legacy host on a server that speaks both eras, through the pool", () => {
  const home = testHome("mcpool-legacy-dual-");
  let http: { url: string; child: ChildProcess } | undefined;
  let daemon: RunningDaemon | undefined;
  let pool: PoolClient | undefined;

  beforeAll(async () => {
    http = await dualHttp();
    home.writeConfig({
      dual: { command: process.execPath, args: [fixture("dual-stdio.mjs")] },
      remote: { type: "http", url: http.url },
    });
    daemon = await startDaemon(home);
    pool = await client(home);
    await waitFor(
      async () => (await pool!.state()).every((s) => s.status === "ready" && s.era === "modern"),
      30_000,
      "both rows to be held in 2026-07-28",
    );
  }, 60_000);

  afterAll(async () => {
    await pool?.close();
    await daemon?.stop();
    const child = http?.child;
    if (child?.pid !== undefined) {
      child.kill("SIGTERM");
      await waitFor(() => !alive(child.pid!), 10_000, "the HTTP fixture to exit");
    }
    home.remove();
  });

  for (const id of ["dual", "remote"]) {
    it(`is served in the legacy era by ${id}, and gets the server's own tool error for a question it cannot take`, async () => {
      const bridge = await stdioBridge(home, ["--server", id]);
      try {
        const whoami = JSON.parse(
          text(await bridge.client.callTool({ name: "whoami", arguments: {} })),
        ) as { era: string };
        expect(whoami.era).toBe("legacy");
        // No elicitation declared: the server's own answer, a tool result with isError.
        const confirm = await bridge.client.callTool({
          name: "confirm",
          arguments: { question: "proceed?" },
        });
        expect(confirm.isError).toBe(true);
        expect(text(confirm)).toMatch(/did not declare/);
        // A listing from a modern server reaches it without the 2026-07-28 fields.
        const prompts = (await bridge.client.listPrompts()) as Record<string, unknown>;
        expect(prompts.ttlMs).toBeUndefined();
        expect(prompts.cacheScope).toBeUndefined();
        // The row's own connection is still modern; the legacy host's child is its own.
        const state = (await pool!.state()).find((s) => s.id === id);
        expect(state?.era).toBe("modern");
        expect(state?.profiles?.length ?? 0).toBeGreaterThan(0);
      } finally {
        await bridge.close();
      }
    }, 60_000);
  }
});
