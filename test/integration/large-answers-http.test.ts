/**
 * An http row's answer over the frame cap — a JSON body, or one server-sent event — is
 * counted and dropped as it arrives, never held whole: the caller is refused with
 * `answer-too-large`, naming the size measured and the cap, every time, and the same row
 * answers the next call.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useFleet } from "../helpers/fleet.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";
import { expectTooLarge } from "../helpers/too-large.js";

const fleet = useFleet();

/** Forty million characters: the text, and the envelope around it. */
const CHARS = 40_000_000;

let server: ChildProcess;
let origin: string;

beforeAll(async () => {
  server = spawn(process.execPath, [fixture("big-answer-http.mjs")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  server.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  await waitFor(() => /listening \S+/.test(out), 10_000, "the http fixture to listen");
  origin = /listening (\S+)/.exec(out)![1]!;
});

afterAll(async () => {
  const pid = server.pid;
  if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
  if (pid !== undefined) await waitFor(() => !alive(pid), 10_000, "the http fixture to exit");
});

describe("an http row's answer over the frame cap", () => {
  it("is refused twice with its measured size, as JSON and as SSE, and the row answers on", async () => {
    const h = fleet.home("mcpool-large-http-");
    h.writeConfig({
      json: { type: "http", url: `${origin}/json` },
      sse: { type: "http", url: `${origin}/sse` },
    });
    await fleet.daemon(h);
    const c = await fleet.agent(h);

    for (const row of ["json", "sse"]) {
      expect(await c.call(`${row}__text`, { chars: 10 })).toBe("0123456789");
      for (let round = 0; round < 2; round++) {
        expectTooLarge(
          await c.call(`${row}__text`, { chars: CHARS }).catch((e: unknown) => e),
          row,
          CHARS,
        );
      }
      expect(await c.call(`${row}__text`, { chars: 25 })).toBe("0123456789012345678901234");
      expect((await c.state()).find((s) => s.id === row)).toMatchObject({ status: "ready" });
    }
  }, 180_000);
});
