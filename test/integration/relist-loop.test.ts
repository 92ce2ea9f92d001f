import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";

const fleet = useFleet();

const echo = () => ({ command: process.execPath, args: [fixture("echo.mjs")] });

describe("a server that changes its tool list on every listing", () => {
  it("is re-listed a bounded number of times, logged once, while the daemon stays responsive and no save races", async () => {
    const h = fleet.home();
    const listings = join(h.dir, "listings.txt");
    writeFileSync(listings, "");
    h.writeConfig({
      loop: {
        command: process.execPath,
        args: [fixture("relist-loop.mjs")],
        env: { LISTINGS_FILE: listings },
      },
      echo: echo(),
    });
    const d = await fleet.daemon(h);
    const c = await fleet.agent(h);
    await waitFor(
      async () => (await c.state()).some((s) => s.id === "echo" && s.status === "ready"),
      20_000,
      "echo to be served",
    );
    const count = (): number => readFileSync(listings, "utf8").split("\n").filter(Boolean).length;
    // Past the burst the loop log marks, into the backoff.
    const reached = 14;
    await waitFor(() => count() >= reached, 30_000, `listing ${reached}`);
    const at = count();
    // A bounded stretch of the daemon's time, counted in answers, not in milliseconds: each
    // call is a round trip through the daemon while the loop goes on.
    for (let i = 0; i < 40; i++) expect(await c.call("echo__echo", { text: `${i}` })).toBe(`${i}`);
    expect(count() - at).toBeLessThanOrEqual(2);
    const log = d.stderr();
    expect(log.match(/sent tools\/list_changed during each of/g)).toHaveLength(1);
    expect(log).not.toMatch(/ENOENT/);
  });
});
