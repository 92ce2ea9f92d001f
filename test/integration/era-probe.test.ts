/**
 * A stdio server's era, found on a spare child: a row with
 * `"protocol": "auto"` and no believed verdict starts a second child that gets only
 * `server/discover`, so the child that serves is never sent a request before `initialize`
 * it did not expect. A dual-era server (SDK v2, `legacy: 'serve'`) is served in the modern
 * era without a pin; a legacy server that exits on any pre-initialize request is served
 * legacy, its spare child's death no crash of the row; the verdict is kept with the tools
 * cache, so a restarted daemon sends no probe; an old legacy verdict is served at once and
 * probed again beside it. The fixtures log `<pid> <method>` per request (ERA_LOG).
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PoolClient } from "mcpool-client";
import { afterAll, describe, expect, it } from "vitest";
import {
  client,
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const DUAL = fixture("dual-stdio.mjs");
const STRICT = fixture("strict-legacy.mjs");

/** The requests each child of a log received, in order, by pid. */
function requestsByPid(log: string): Map<number, string[]> {
  const byPid = new Map<number, string[]>();
  if (!existsSync(log)) return byPid;
  for (const line of readFileSync(log, "utf8").split("\n").filter(Boolean)) {
    const [pid, method] = line.split(" ") as [string, string];
    const seen = byPid.get(Number(pid)) ?? [];
    seen.push(method);
    byPid.set(Number(pid), seen);
  }
  return byPid;
}

function text(result: unknown): string {
  if (typeof result === "string") return result;
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

/** The tools cache file of row `id` under the test home's data directory. */
function cacheFile(dir: string, id: string): string {
  const walk = (at: string): string | undefined => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        const found = walk(path);
        if (found) return found;
      } else if (path.endsWith(join("tools-cache", `${id}.json`))) return path;
    }
    return undefined;
  };
  const found = walk(join(dir, "data"));
  if (!found) throw new Error(`no tools cache file for ${id}`);
  return found;
}

/**
 * A daemon over `home` started and stopped as a test needs: `start` waits for the rows
 * `ids` to be ready; every child any start logged in `logs` is gone once the suite ends.
 */
function lifecycle(home: TestHome, ids: readonly string[], logs: readonly string[]) {
  let daemon: RunningDaemon | undefined;
  let pool: PoolClient | undefined;
  const seenPids = new Set<number>();
  async function stop(): Promise<void> {
    for (const log of logs) for (const pid of requestsByPid(log).keys()) seenPids.add(pid);
    await pool?.close();
    pool = undefined;
    await daemon?.stop();
    daemon = undefined;
  }
  afterAll(async () => {
    await stop();
    // No child of any start is left behind: spare children and serving ones alike.
    for (const pid of seenPids) await waitFor(() => !alive(pid), 15_000, `child ${pid} to be gone`);
    home.remove();
  });
  return {
    async start(): Promise<void> {
      daemon = await startDaemon(home);
      pool = await client(home);
      await waitFor(
        async () => {
          const state = await pool!.state();
          return ids.every((id) => state.find((s) => s.id === id)?.status === "ready");
        },
        30_000,
        "the servers to be ready",
      );
    },
    stop,
    pool: (): PoolClient => pool!,
  };
}

describe("a stdio server's era, found on a spare child", () => {
  const home = testHome("mcpool-era-probe-");
  const dualLog = join(home.dir, "dual.log");
  const strictLog = join(home.dir, "strict.log");
  home.writeConfig({
    dual: { command: process.execPath, args: [DUAL], env: { ERA_LOG: dualLog } },
    strict: { command: process.execPath, args: [STRICT], env: { ERA_LOG: strictLog } },
  });
  const { start, stop, pool } = lifecycle(home, ["dual", "strict"], [dualLog, strictLog]);

  it("serves a dual-era stdio server in the modern era without a pin; its serving child never got initialize", async () => {
    await start();
    expect(text(await pool().call("dual__echo", { text: "modern" }))).toBe("modern");
    const dual = (await pool().state()).find((s) => s.id === "dual")!;
    expect([dual.era, dual.protocolVersion]).toEqual(["modern", "2026-07-28"]);
    const children = requestsByPid(dualLog);
    const serving = children.get(dual.pid!)!;
    expect(serving).toContain("tools/list");
    expect(serving).toContain("tools/call");
    expect(serving).not.toContain("initialize");
    expect(serving).not.toContain("server/discover");
    // The spare child: server/discover and nothing else, and it is gone.
    const spares = [...children].filter(([pid]) => pid !== dual.pid);
    expect(spares.map(([, methods]) => methods)).toEqual([["server/discover"]]);
    await waitFor(() => !alive(spares[0]![0]), 15_000, "the spare child to be gone");
    const human = runCli(home, "status");
    expect(human.stdout).toMatch(/^dual\s+ready\s.*\s2026-07-28\s*$/m);
  });

  it("serves legacy a stdio server that exits on any request before initialize; its serving child is untouched, the spare's exit no failure", async () => {
    expect(text(await pool().call("strict__echo", { text: "legacy" }))).toBe("legacy");
    const strict = (await pool().state()).find((s) => s.id === "strict")!;
    expect(strict.status).toBe("ready");
    expect(strict.error).toBeUndefined();
    expect(strict.retryAt).toBeUndefined();
    expect([strict.era, strict.protocolVersion]).toEqual(["legacy", "2025-11-25"]);
    const children = requestsByPid(strictLog);
    const serving = children.get(strict.pid!)!;
    expect(serving[0]).toBe("initialize");
    expect(serving).not.toContain("server/discover");
    expect(alive(strict.pid!)).toBe(true);
    const spares = [...children].filter(([pid]) => pid !== strict.pid);
    expect(spares.map(([, methods]) => methods)).toEqual([["server/discover"]]);
    await waitFor(() => !alive(spares[0]![0]), 15_000, "the spare child to be gone");
  });

  it("keeps the verdict with the tools cache: a restarted daemon starts one child per server and sends no probe", async () => {
    await stop();
    rmSync(dualLog, { force: true });
    rmSync(strictLog, { force: true });
    await start();
    expect(text(await pool().call("dual__echo", { text: "again" }))).toBe("again");
    expect(text(await pool().call("strict__echo", { text: "again" }))).toBe("again");
    const dual = [...requestsByPid(dualLog).values()];
    expect(dual).toHaveLength(1);
    expect(dual[0]).toContain("tools/list");
    expect(dual[0]).not.toContain("server/discover");
    expect(dual[0]).not.toContain("initialize");
    const strict = [...requestsByPid(strictLog).values()];
    expect(strict).toHaveLength(1);
    expect(strict[0]![0]).toBe("initialize");
    expect(strict[0]).not.toContain("server/discover");
  });

  it("serves an old legacy verdict at once and probes again beside it; the next start is modern with no probe", async () => {
    await stop();
    // The dual server's verdict, made legacy and 25 hours old, as if it had been upgraded since.
    const file = cacheFile(home.dir, "dual");
    const cached = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const old = Date.now() - 25 * 60 * 60 * 1000;
    writeFileSync(file, JSON.stringify({ ...cached, era: { era: "legacy", at: old } }));
    rmSync(dualLog, { force: true });
    await start();
    const dual = (await pool().state()).find((s) => s.id === "dual")!;
    expect(dual.era).toBe("legacy");
    await waitFor(
      () => {
        const era = (JSON.parse(readFileSync(file, "utf8")) as { era?: { era?: string } }).era;
        return era?.era === "modern";
      },
      30_000,
      "the re-probed verdict to be saved",
    );
    const children = requestsByPid(dualLog);
    expect(children.get(dual.pid!)![0]).toBe("initialize");
    const spares = [...children].filter(([pid]) => pid !== dual.pid);
    expect(spares.map(([, methods]) => methods)).toEqual([["server/discover"]]);

    await stop();
    rmSync(dualLog, { force: true });
    await start();
    const again = (await pool().state()).find((s) => s.id === "dual")!;
    expect([again.era, again.protocolVersion]).toEqual(["modern", "2026-07-28"]);
    const after = [...requestsByPid(dualLog).values()];
    expect(after).toHaveLength(1);
    expect(after[0]).not.toContain("server/discover");
    expect(after[0]).not.toContain("initialize");
  });
});

describe("a kept server/discover answer lives as long as it says (SEP-2549)", () => {
  const home = testHome("mcpool-discover-ttl-");
  const log = join(home.dir, "brief.log");
  // A dual-era server whose server/discover answer says it holds for 1 ms.
  home.writeConfig({
    brief: {
      command: process.execPath,
      args: [DUAL],
      env: { ERA_LOG: log, MODERN_DISCOVER_TTL_MS: "1" },
    },
  });
  const { start, stop, pool } = lifecycle(home, ["brief"], [log]);

  it("asks the serving child server/discover again once the kept answer ran out, on the first start and after a restart, with no spare and no initialize", async () => {
    await start();
    const first = (await pool().state()).find((s) => s.id === "brief")!;
    expect([first.era, first.protocolVersion]).toEqual(["modern", "2026-07-28"]);
    const children = requestsByPid(log);
    // The spare's answer ran out before the serving child connected: it was asked its own.
    const serving = children.get(first.pid!)!;
    expect(serving[0]).toBe("server/discover");
    expect(serving).toContain("tools/list");
    const spares = [...children].filter(([pid]) => pid !== first.pid);
    expect(spares.map(([, methods]) => methods)).toEqual([["server/discover"]]);

    await stop();
    rmSync(log, { force: true });
    await start();
    expect(text(await pool().call("brief__echo", { text: "again" }))).toBe("again");
    const after = [...requestsByPid(log).values()];
    // The era is known (one child, no initialize); the answer that ran out is asked again.
    expect(after).toHaveLength(1);
    expect(after[0]![0]).toBe("server/discover");
    expect(after[0]).toContain("tools/call");
    expect(after[0]).not.toContain("initialize");
  });
});
