/**
 * A server's unasked notifications reach only the hosts its process serves: two SDK v1 hosts
 * of two projects (their own roots) at once on one row, direct each with its own server
 * process, through the pool each served by its project's child. A server whose log lines
 * name its client's roots (test/fixtures/roots-notices.mjs): one host sets its log level, each
 * makes its server log and change its resource and prompt lists, one makes its server add a
 * tool. Each host hears exactly what it hears direct — its own lines at its own level, its
 * own list changes, never the other project's — through the SDK bridge, the lean bridge and
 * the perl relay. And a host with roots, served by its project's child, hears nothing when
 * the row's own connection adds a tool: direct, its own process's list did not change.
 * (2026-07-28 hosts: notices-modern.test.ts.)
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixture, waitFor } from "../helpers/processes.js";
import { testHome } from "../helpers/daemon.js";
import { openHost, type Entry } from "./entries.js";
import type { Host } from "./host.js";
import { growRow } from "./row-growth.js";
import { pooling } from "./run.js";
import { nodeServer } from "./servers.js";

const server = nodeServer("notices", [fixture("roots-notices.mjs")]);

/** How long a host may take to hear the last notice its server sends it, ms. */
const HEARD_MS = 15_000;

describe("a server's log lines and list changes reach the hosts its process serves", () => {
  const home = testHome("mcpool-differential-notices-");
  pooling(home, [server]);

  function project(name: string): string {
    const dir = join(home.dir, `project-${name}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /**
   * Resolves once `host` heard `notice`, or its bound passed: a notice never heard is what the
   * comparison then shows. The server sends it last, so what it sent before has come.
   */
  async function heard(host: Host, notice: string): Promise<void> {
    await waitFor(() => host.notices?.includes(notice) === true, HEARD_MS).catch(() => undefined);
  }

  /** `projects`: the names of the two hosts' projects (each case its own, as its own children). */
  async function session(entry: Entry, projects: string): Promise<Record<string, unknown>> {
    const open = (name: string): Promise<Host> =>
      openHost(
        home,
        server,
        { client: "v1", capabilities: "roots", root: project(`${projects}-${name}`) },
        entry,
      );
    const [a, b] = await Promise.all([open("a"), open("b")]);
    try {
      const note = { name: "note", arguments: {} };
      await b.request("logging/setLevel", { level: "warning" });
      const noteA = await a.request("tools/call", note);
      await heard(a, "notifications/prompts/list_changed");
      const noteB = await b.request("tools/call", note);
      await heard(b, "notifications/prompts/list_changed");
      await a.request("tools/call", { name: "grow", arguments: {} });
      await heard(a, "notifications/tools/list_changed");
      const names = async (host: Host): Promise<string[]> =>
        ((await host.request("tools/list", {})) as { tools: { name: string }[] }).tools.map(
          (tool) => tool.name,
        );
      return {
        a: { note: noteA, notices: [...(a.notices ?? [])].sort(), tools: await names(a) },
        b: { note: noteB, notices: [...(b.notices ?? [])].sort(), tools: await names(b) },
      };
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }

  /**
   * A host with roots (`name`: its project's), served by its project's child, while the
   * process that serves a caller naming no profile adds a tool (row-growth.ts): the notices
   * it heard, after a request of its own that comes after the change is known.
   */
  async function ownChange(entry: Entry, name: string): Promise<string[]> {
    const spec = { client: "v1", capabilities: "roots", root: project(name) } as const;
    const rooted = await openHost(home, server, spec, entry);
    try {
      const roots = { name: "roots", arguments: {} };
      await rooted.request("tools/call", roots);
      await growRow(home, server, entry !== "direct");
      await rooted.request("tools/call", roots);
      return [...(rooted.notices ?? [])];
    } finally {
      await rooted.close();
    }
  }

  it.each(["cli", "lean", "perl"] as const)(
    "the row's own tool list change through %s reaches none of another connection's hosts, as direct",
    async (entry) => {
      const direct = await ownChange("direct", `own-${entry}`);
      expect(direct).toEqual([]);
      expect(await ownChange(entry, `own-${entry}`)).toEqual(direct);
    },
    120_000,
  );

  it.each(["cli", "lean", "perl"] as const)(
    "two projects' hosts at once through %s each hear what they hear direct",
    async (entry) => {
      const direct = await session("direct", entry);
      // The oracle itself: direct, a host hears nothing of the other project.
      expect(JSON.stringify(direct.b)).not.toContain(`project-${entry}-a`);
      expect(await session(entry, entry)).toEqual(direct);
    },
    180_000,
  );
});
