/**
 * Direct is the oracle, for the real hosts: Claude Code (`claude -p`), Gemini CLI (`gemini
 * -p`) and Codex's app-server, installed pinned (test/helpers/real-hosts.ts), each run the
 * same session twice in one private HOME — once with its own file naming server-everything,
 * -memory and -filesystem direct, once after `mcpool wire <host> --write` — and what it shows
 * its model or its user of the servers must be equal: the MCP tools (names, descriptions,
 * input schemas), the servers' instructions, and one call's result per server (real-hosts.ts).
 * One daemon serves the file; the hosts' sessions run beside each other.
 * Opt-in: MCPOOL_REAL_HOSTS=1 or CI=true.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOST_MS } from "../helpers/real-hosts-cli.js";
import {
  INSTALL_MS,
  installed,
  REAL_HOSTS,
  REAL_HOSTS_OFF,
  realWorld,
  SERVER_IDS,
  serversReady,
  type RealWorld,
} from "../helpers/real-hosts.js";
import { differences } from "./normalise.js";
import {
  CALLS,
  claudeCode,
  codexAppServerHost,
  geminiCli,
  MODEL_TOOL_NAME,
  standIn,
  type StandIn,
  type View,
  type ViewedHost,
} from "./real-hosts.js";

/** A host's two views, or what stopped either. */
interface Seen {
  direct?: View;
  pooled?: View;
  error?: unknown;
}

/** `views` as a one-step transcript each, for the suite's comparison (`path: direct → pooled`). */
const compareViews = (direct: View, pooled: View): string[] =>
  differences([{ op: "view", result: direct }], [{ op: "view", result: pooled }]);

describe.runIf(REAL_HOSTS)(
  `real hosts see through mcpool wire what they see direct${REAL_HOSTS ? "" : ` (${REAL_HOSTS_OFF})`}`,
  () => {
    let world: RealWorld;
    const apis: StandIn[] = [];
    let hosts: ViewedHost[] = [];
    const seen = new Map<string, Seen>();

    /** Each host's view in a labelled run, all beside each other; a failure stays the host's. */
    const viewAll = async (prefix: string, side: "direct" | "pooled"): Promise<void> => {
      await Promise.all(
        hosts.map(async (host) => {
          const mine = seen.get(host.wire)!;
          if (mine.error !== undefined) return;
          try {
            mine[side] = await host.view(prefix, world, `${host.wire}-${side}`);
          } catch (error) {
            mine.error = error;
          }
        }),
      );
    };

    beforeAll(
      async () => {
        const prefix = await installed("hosts");
        world = realWorld();
        const record = (name: string): string => join(world.home, `${name}.jsonl`);
        const anthropic = await standIn(
          "fake-anthropic.mjs",
          record("anthropic"),
          MODEL_TOOL_NAME.claude,
        );
        apis.push(anthropic);
        const gemini = await standIn("fake-gemini.mjs", record("gemini"), MODEL_TOOL_NAME.gemini);
        apis.push(gemini);
        hosts = [claudeCode(anthropic), geminiCli(gemini), codexAppServerHost()];
        for (const host of hosts) {
          seen.set(host.wire, {});
          host.configure(world);
        }
        await viewAll(prefix, "direct");

        await world.serve();
        await serversReady(world);
        for (const host of hosts) {
          const wired = await world.cli(["wire", host.wire, "--write"]);
          const text = readFileSync(host.file(world), "utf8");
          // Every server's entry goes to the user's daemon, or the pooled run proves nothing.
          if (wired.code !== 0 || text.split(world.socket).length - 1 !== SERVER_IDS.length) {
            seen.get(host.wire)!.error = new Error(`wire ${host.wire}: ${wired.stdout}\n${text}`);
          }
        }
        await viewAll(prefix, "pooled");
      },
      INSTALL_MS + 4 * HOST_MS,
    );

    afterAll(async () => {
      // For a look at what each host saw: DIFF_OUT=<file> keeps the views.
      const out = process.env.DIFF_OUT;
      if (out !== undefined) writeFileSync(out, JSON.stringify(Object.fromEntries(seen), null, 2));
      for (const api of apis) await api.stop();
      await world?.remove();
    });

    it.each(["claude-code", "gemini", "codex"])(
      "%s: the MCP tools, the servers' instructions and one call per server are what they are direct",
      (wire) => {
        const mine = seen.get(wire)!;
        if (mine.error !== undefined) throw mine.error;
        const direct = mine.direct!;
        // Not an empty pair: direct the host saw every server's tools and made every call.
        expect(JSON.stringify(direct.tools ?? direct.status)).toContain("read_graph");
        expect((direct.results as unknown[]).length).toBe(CALLS.length);
        expect(compareViews(direct, mine.pooled!)).toEqual([]);
      },
    );
  },
);
