/**
 * A project's child serves once its server has taken the host's roots in, and no clock
 * decides otherwise: a server seen to show its uptake (a stderr line after our answer) is
 * never served to a project before it shows it — past the bound the use fails, naming
 * the wait, and the next use dials afresh; it never answers with roots it has not taken in.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it, type TestContext } from "vitest";
import { McpPool } from "../../src/index.js";
import type { CachedTools, ToolsCacheStore } from "../../src/pool/catalog/tools-cache.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

/** The row's bound on a server's sign of taking its roots in, and on its dial. */
const BOUND_MS = 8_000;

/**
 * A test's own folder of projects and the pool it has open, closed with every child it
 * spawned gone once the test ends: the tests run side by side, as each waits out the
 * bound once on purpose.
 */
function uptakeCase({ onTestFinished }: TestContext) {
  let pool: McpPool | undefined;
  const spawned: number[] = [];
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "mcpool-uptake-")));
  const close = async (): Promise<void> => {
    await pool?.close();
    pool = undefined;
  };
  onTestFinished(async () => {
    await close();
    for (const pid of spawned.splice(0)) {
      await waitFor(() => !alive(pid), 15_000, `child ${pid} to exit`);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** A project directory, as a host declaring it as its only root names it. */
  const project = (name: string): { roots: { uri: string }[] } => {
    const path = join(dir, name);
    mkdirSync(path, { recursive: true });
    return { roots: [{ uri: pathToFileURL(path).href }] };
  };

  const open = async (toolsCache?: ToolsCacheStore): Promise<McpPool> => {
    pool = new McpPool({
      clientName: "mcpool-test",
      log: {},
      ...(toolsCache ? { toolsCache } : {}),
      onChild: (event) => {
        if (event.type === "spawn") spawned.push(event.pid);
      },
    });
    await pool.sync([
      {
        id: "gated",
        transport: "stdio",
        command: process.execPath,
        args: [fixture("gated-roots.mjs")],
        protocol: "legacy",
        connectTimeoutMs: BOUND_MS,
      },
    ]);
    return pool;
  };

  /** Opens the gate of project `name`: its server takes its roots in and says so. */
  const takeIn = (name: string): void => writeFileSync(join(dir, name, "take-in"), "");

  /**
   * Opens the pool and has project "first", whose server takes its roots in, call the
   * server: the row is then known to show its uptake. Gives the call's answer.
   */
  const firstServed = async (toolsCache?: ToolsCacheStore) => {
    const served = await open(toolsCache);
    const first = project("first");
    takeIn("first");
    return {
      pool: served,
      first,
      answer: await served.call("gated__roots", {}, { profile: first }),
    };
  };
  return { spawned, project, open, close, takeIn, firstServed };
}

describe.concurrent("a server known to show that it took its roots in", () => {
  it("never serves a project before its server shows it took the roots in", async (ctx) => {
    const { expect } = ctx;
    const { project, takeIn, firstServed } = uptakeCase(ctx);
    // The first project's server takes its roots in and says so: the row is known to show it.
    const { pool, first, answer } = await firstServed();
    expect(answer).toBe(first.roots[0]!.uri);
    // The next project's server asks and takes nothing in until its gate opens: its call
    // fails past the bound, naming the wait, instead of running with no roots.
    const second = project("second");
    await expect(pool.call("gated__roots", {}, { profile: second })).rejects.toThrow(
      /gave no sign of taking them in/,
    );
    takeIn("second");
    expect(await pool.call("gated__roots", {}, { profile: second })).toBe(second.roots[0]!.uri);
  }, 60_000);

  it("serves a call after a refused listing once the project takes its roots in", async (ctx) => {
    const { expect } = ctx;
    const { project, takeIn, firstServed } = uptakeCase(ctx);
    const { pool, first, answer } = await firstServed();
    expect(answer).toBe(first.roots[0]!.uri);
    // The listing meets the server's silence and leaves the row out; the user then fixes
    // the project. The call after that dials afresh and is served, as direct.
    const second = project("second");
    await pool.hostTools(second);
    takeIn("second");
    expect(await pool.call("gated__roots", {}, { profile: second })).toBe(second.roots[0]!.uri);
  }, 60_000);

  it("keeps it with the tools cache: a restarted pool waits for the sign from its first child", async (ctx) => {
    const { expect } = ctx;
    const { project, open, close, firstServed } = uptakeCase(ctx);
    const stored = new Map<string, CachedTools>();
    const store: ToolsCacheStore = {
      load: (id) => stored.get(id),
      save: (id, cached) => void stored.set(id, structuredClone(cached)),
    };
    const { first, answer } = await firstServed(store);
    expect(answer).toBe(first.roots[0]!.uri);
    await waitFor(
      () => stored.get("gated")?.profiles?.showsUptake === true,
      15_000,
      "the tools cache to keep what the server showed",
    );
    await close();
    // The restarted pool's first project child is one whose server takes nothing in yet.
    const second = project("second");
    await expect((await open(store)).call("gated__roots", {}, { profile: second })).rejects.toThrow(
      /gave no sign of taking them in/,
    );
  }, 60_000);
});
