/**
 * A request of a server's over the frame cap is dropped unread, and the server is answered
 * with an error that says so: it does not wait on an answer that will never come, so the
 * call that led to it ends with the server's own word instead of the caller's timeout.
 */
import { describe, expect, it } from "vitest";
import { useFleet } from "../helpers/fleet.js";
import { fixture } from "../helpers/processes.js";

const fleet = useFleet();

const CHARS = 20_000_000;

describe("a server's request over the frame cap", () => {
  it("is answered with an error naming its size, and the same child serves on", async () => {
    const h = fleet.home("mcpool-large-request-");
    h.writeConfig({ asker: { command: process.execPath, args: [fixture("big-request.mjs")] } });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    expect(await c.call("asker__ask", { chars: 10 })).toBe("answered");
    const pid = (await c.state()).find((s) => s.id === "asker")?.pid;

    const refused = await c.call("asker__ask", { chars: CHARS });
    expect(refused).toMatch(/^refused: .*the request is \d+ bytes, over the 16777216-byte cap/);

    expect(await c.call("asker__ask", { chars: 10 })).toBe("answered");
    expect((await c.state()).find((s) => s.id === "asker")).toMatchObject({ status: "ready", pid });
  }, 120_000);
});
