/**
 * A modern server's changes reach the pool: in the 2026-07-28 revision nothing
 * changes unsolicited, so the pool opens a `subscriptions/listen` stream on each modern
 * connection whose server says its lists change, and a tools/list_changed on it makes the
 * pool list again — over stdio and Streamable HTTP, against SDK v2 servers that speak only
 * that revision (test/fixtures/modern-*.mjs).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { McpPool, McpServerConfig, PoolEvent } from "../../src/index.js";
import { nodeRow, poolMaker } from "../helpers/stdio-pool.js";
import { alive, fixture, nextMatching, waitFor } from "../helpers/processes.js";

const { pool, made } = poolMaker();
let http: ChildProcess | undefined;
let httpUrl = "";

beforeAll(async () => {
  http = spawn(process.execPath, [fixture("modern-http.mjs")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  http.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  await waitFor(() => /listening \S+/.test(out), 15_000, "the modern HTTP fixture to listen");
  httpUrl = /listening (\S+)/.exec(out)![1] as string;
});

afterAll(async () => {
  const pid = http?.pid;
  http?.kill("SIGTERM");
  if (pid !== undefined) await waitFor(() => !alive(pid), 10_000, "the HTTP fixture to exit");
});

afterEach(async () => {
  await Promise.all(made.splice(0).map((p) => p.close()));
});

/** The tools-changed event that adds `tool` to server `id`'s list. */
function listed(p: McpPool, id: string, tool: string): Promise<PoolEvent> {
  return nextMatching<PoolEvent>(
    (listener) => p.onEvent(listener),
    (event) =>
      event.type === "tools-changed" && event.serverId === id && event.added.includes(tool),
  );
}

const rows: Record<string, () => McpServerConfig> = {
  stdio: () => nodeRow("modern", "modern-stdio.mjs"),
  http: () => ({ id: "modern", transport: "http", url: httpUrl }) as McpServerConfig,
};

describe("a modern server's list changes, on its subscriptions/listen stream", () => {
  for (const [kind, row] of Object.entries(rows)) {
    it(`lists a ${kind} server's tools again when it says they changed`, async () => {
      const p = pool();
      await p.sync([row()]);
      expect(p.state()[0]).toMatchObject({ status: "ready", era: "modern" });
      const name = `grown_${kind}`;
      const seen = listed(p, "modern", name);
      expect(await p.call("modern__grow", { name })).toBe(`grew ${name}`);
      await seen;
      expect(await p.call(`modern__${name}`, {})).toBe(name);
    });
  }
});
