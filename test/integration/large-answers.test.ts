/**
 * An answer over the frame cap is counted and dropped as it arrives, never held whole:
 * the caller is refused with `answer-too-large`, naming the size measured and the cap,
 * every time, and the row answers the next call on the same child.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture } from "../helpers/processes.js";

const fleet = useFleet();

const CAP = 16 * 1024 * 1024;
/** Forty million characters: the text, and the envelope around it. */
const CHARS = 40_000_000;

describe("an answer over the frame cap", () => {
  it("is refused twice with its measured size, and the same child answers the next call", async () => {
    const h = fleet.home("mcpool-large-");
    h.writeConfig({ big: { command: process.execPath, args: [fixture("big-answer.mjs")] } });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    expect(await c.call("big__text", { chars: 10 })).toBe("0123456789");
    const pid = (await c.state()).find((s) => s.id === "big")?.pid;
    expect(pid).toEqual(expect.any(Number));

    for (let round = 0; round < 2; round++) {
      const error = (await c.call("big__text", { chars: CHARS }).catch((e: unknown) => e)) as {
        code?: string;
        message: string;
        detail?: { bytes?: number; maxFrameBytes?: number; serverId?: string };
      };
      expect(error).toMatchObject({ code: "answer-too-large" });
      const bytes = error.detail?.bytes;
      // Every byte of the answer's line was counted: the text and its JSON envelope.
      expect(bytes).toBeGreaterThan(CHARS);
      expect(error.detail?.maxFrameBytes).toBe(CAP);
      expect(error.message).toContain(`${bytes} bytes`);
      expect(error.message).toContain(`${CAP}-byte frame cap`);
      // Refused by the reader of the child's stdout as the bytes came, not once held whole.
      expect(error.message).toMatch(/dropped as it arrived; the tool ran/);
      expect(error.detail).toMatchObject({ serverId: "big" });
    }

    expect(await c.call("big__text", { chars: 25 })).toBe("0123456789012345678901234");
    const after = (await c.state()).find((s) => s.id === "big");
    expect(after).toMatchObject({ status: "ready", pid });

    const cli = runCli(h, "call", "big__text", JSON.stringify({ chars: CHARS }));
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/over the daemon's 16777216-byte frame cap/);
  }, 120_000);
});
