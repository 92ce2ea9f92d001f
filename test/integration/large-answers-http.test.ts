/**
 * An http row's answer over the frame cap — a JSON body, or one server-sent event, from a
 * 2025-11-25 server and from a 2026-07-28 one — is counted and dropped as it arrives, never
 * held whole: the caller is refused with `answer-too-large`, naming the size measured and
 * the cap, every time, and the same row answers the next call.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useFleet } from "../helpers/fleet.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";
import { expectTooLarge } from "../helpers/too-large.js";

const fleet = useFleet();

/** Forty million characters: the text, and the envelope around it. */
const CHARS = 40_000_000;

const servers: ChildProcess[] = [];

/** An http fixture, once it says where it listens. */
async function listening(name: string): Promise<string> {
  const child = spawn(process.execPath, [fixture(name)], { stdio: ["pipe", "pipe", "inherit"] });
  servers.push(child);
  let out = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  await waitFor(() => /listening \S+/.test(out), 10_000, `${name} to listen`);
  return /listening (\S+)/.exec(out)![1]!;
}

let legacy: string;
let modern: string;

beforeAll(async () => {
  legacy = await listening("big-answer-http.mjs");
  modern = await listening("big-answer-modern.mjs");
});

afterAll(async () => {
  for (const child of servers) {
    const pid = child.pid;
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    if (pid !== undefined) await waitFor(() => !alive(pid), 10_000, "the http fixture to exit");
  }
});

describe("an http row's answer over the frame cap", () => {
  it("is refused twice with its measured size, as JSON, as SSE and in the modern era, and the row answers on", async () => {
    const h = fleet.home("mcpool-large-http-");
    h.writeConfig({
      json: { type: "http", url: `${legacy}/json` },
      sse: { type: "http", url: `${legacy}/sse` },
      // Speaks only 2026-07-28 and refuses a legacy initialize: its calls are modern ones.
      modern: { type: "http", url: modern },
    });
    await fleet.daemon(h);
    const c = await fleet.agent(h);

    for (const row of ["json", "sse", "modern"]) {
      expect(await c.call(`${row}__text`, { chars: 10 })).toBe("0123456789");
      for (let round = 0; round < 2; round++) {
        const refusal = await c.call(`${row}__text`, { chars: CHARS }).catch((e: unknown) => e);
        expectTooLarge(refusal, row, CHARS);
      }
      expect(await c.call(`${row}__text`, { chars: 25 })).toBe("0123456789012345678901234");
      expect((await c.state()).find((s) => s.id === row)).toMatchObject({ status: "ready" });
    }
  }, 240_000);
});
