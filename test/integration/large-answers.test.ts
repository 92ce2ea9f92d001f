/**
 * An answer over the frame cap is counted and dropped as it arrives, never held whole:
 * the caller is refused with `answer-too-large`, naming the size measured and the cap,
 * every time, and the row answers the next call on the same child.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture } from "../helpers/processes.js";
import { expectTooLarge } from "../helpers/too-large.js";

const fleet = useFleet();

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
      expectTooLarge(
        await c.call("big__text", { chars: CHARS }).catch((e: unknown) => e),
        "big",
        CHARS,
      );
    }

    expect(await c.call("big__text", { chars: 25 })).toBe("0123456789012345678901234");
    const after = (await c.state()).find((s) => s.id === "big");
    expect(after).toMatchObject({ status: "ready", pid });

    const cli = runCli(h, "call", "big__text", JSON.stringify({ chars: CHARS }));
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/over the daemon's 16777216-byte frame cap/);
  }, 120_000);
});
