/**
 * A per-conversation row's era: one child per conversation and none spare for
 * each, so the row's era is found once, on a spare child of the row, before its first
 * conversation's child dials, and every conversation's child is then spoken to in that era —
 * a dual-era server (test/fixtures/dual-stdio.mjs, which logs `<pid> <method>` per request)
 * in the modern one, no `initialize` sent. The verdict is kept with the tools cache: a
 * restarted daemon probes no more.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { PoolClient } from "mcpool-client";
import { afterAll, describe, expect, it } from "vitest";
import { client, startDaemon, testHome, type RunningDaemon } from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

/** The requests each child of the log received, in order, by pid. */
function requestsByPid(log: string): Map<number, string[]> {
  const byPid = new Map<number, string[]>();
  if (!existsSync(log)) return byPid;
  for (const line of readFileSync(log, "utf8").split("\n").filter(Boolean)) {
    const [pid, method] = line.split(" ") as [string, string];
    byPid.set(Number(pid), [...(byPid.get(Number(pid)) ?? []), method]);
  }
  return byPid;
}

function text(result: unknown): string {
  if (typeof result === "string") return result;
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

describe("a per-conversation row's era", () => {
  const home = testHome("mcpool-conversation-era-");
  const log = join(home.dir, "dual.log");
  let daemon: RunningDaemon | undefined;
  let pool: PoolClient | undefined;

  home.writeConfig({
    dual: {
      command: process.execPath,
      args: [fixture("dual-stdio.mjs")],
      env: { ERA_LOG: log },
      session: "conversation",
    },
  });

  async function start(): Promise<void> {
    daemon = await startDaemon(home);
    pool = await client(home);
  }

  async function stop(): Promise<void> {
    await pool?.close();
    pool = undefined;
    await daemon?.stop();
    daemon = undefined;
  }

  const said = (conversationId: string, words: string) =>
    pool!.withIdentity({ principal: "alice", conversationId }).call("dual__echo", { text: words });

  afterAll(async () => {
    await stop();
    for (const pid of requestsByPid(log).keys()) {
      await waitFor(() => !alive(pid), 15_000, `child ${pid} to be gone`);
    }
    home.remove();
  });

  it("speaks to each conversation's child of a dual-era server in the modern era, its era found once on a spare child", async () => {
    await start();
    expect(text(await said("c1", "one"))).toBe("one");
    expect(text(await said("c2", "two"))).toBe("two");
    const children = [...requestsByPid(log).values()];
    // One spare child, asked server/discover alone; two conversation children, never initialize.
    expect(children.filter((methods) => methods.includes("server/discover"))).toEqual([
      ["server/discover"],
    ]);
    const serving = children.filter((methods) => methods.includes("tools/call"));
    expect(serving).toHaveLength(2);
    for (const methods of serving) {
      expect(methods).not.toContain("initialize");
      expect(methods).not.toContain("server/discover");
    }
  }, 60_000);

  it("probes no more after a restart: the verdict was kept with the tools cache", async () => {
    await stop();
    const before = requestsByPid(log);
    await start();
    expect(text(await said("c3", "three"))).toBe("three");
    const after = requestsByPid(log);
    const fresh = [...after].filter(([pid]) => !before.has(pid)).map(([, methods]) => methods);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]).toContain("tools/call");
    expect(fresh[0]).not.toContain("initialize");
    expect(fresh[0]).not.toContain("server/discover");
  }, 60_000);
});
