/**
 * Names no row can take, against a real daemon: an id or slug that would blur
 * where a qualified name's slug ends is refused, and a row that wants a serving row's slug
 * is the one left out, wherever it stands in the file — the serving server keeps every tool
 * and its child; `validate` and `status` both say why.
 */
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { runCli } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";

const BOUND_MS = 20_000;
const fleet = useFleet();

const echo = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [fixture("echo.mjs")],
  ...extra,
});

async function readyPid(c: PoolClient, id: string): Promise<number> {
  let pid: number | undefined;
  await waitFor(
    async () => {
      const state = (await c.state()).find((s) => s.id === id);
      pid = state?.status === "ready" ? state.pid : undefined;
      return pid !== undefined;
    },
    BOUND_MS,
    `${id} to be ready`,
  );
  return pid as number;
}

describe("names no row can take", () => {
  it("keeps a serving row's slug and every tool when a new row placed before it wants the slug", async () => {
    const h = fleet.home();
    h.writeConfig({ old: echo({ slug: "s" }) });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    const pid = await readyPid(c, "old");
    const before = (await c.tools()).map((t) => t.function.name);
    expect(before).toContain("s__echo");

    h.writeConfig({ new: echo({ slug: "s" }), old: echo({ slug: "s" }) });
    await waitFor(
      async () => (await c.status()).config.problems.some((p) => p.includes("`new`:")),
      BOUND_MS,
      "the reload to refuse the new row",
    );
    const status = await c.status();
    expect(status.config.problems).toEqual([
      expect.stringMatching(/^line \d+: `new`: shares the slug `s` with `old`, which keeps it/),
    ]);
    expect(status.servers.map((s) => s.id)).toEqual(["old"]);
    expect(status.servers[0]).toMatchObject({ status: "ready", pid });
    expect(status.servers[0]?.tools.some((t) => t.clashed)).toBe(false);
    expect((await c.tools()).map((t) => t.function.name)).toEqual(before);
    expect(await c.call("s__echo", { text: "still old" })).toBe("still old");

    const text = runCli(h, "status");
    expect(text.stdout).toMatch(/1 problem/);
    expect(text.stdout).toMatch(/`new`: shares the slug `s` with `old`/);
    const validate = runCli(h, "validate");
    expect(validate.code).not.toBe(0);
    // Without the daemon nothing serves: the file's first row keeps the slug, and validate
    // names the clash all the same.
    expect(validate.stdout + validate.stderr).toMatch(/`old`: shares the slug `s` with `new`/);
  });

  it("refuses an id holding `__`, so no server's tools can take another's names", async () => {
    const h = fleet.home();
    h.writeConfig({ a: echo(), a__b: echo() });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    await readyPid(c, "a");
    const status = await c.status();
    expect(status.servers.map((s) => s.id)).toEqual(["a"]);
    expect(status.config.problems).toEqual([
      expect.stringMatching(/^line \d+: `a__b`: `id` "a__b" may not hold `__` or end in `_`/),
    ]);
    const validate = runCli(h, "validate");
    expect(validate.stdout + validate.stderr).toMatch(/a__b.*may not hold `__`/);
  });
});
