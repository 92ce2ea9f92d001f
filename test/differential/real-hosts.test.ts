/**
 * Direct is the oracle, for the real hosts: Claude Code (`claude -p`), Gemini CLI (`gemini
 * -p`) and Codex's app-server, installed pinned (test/helpers/real-hosts.ts), each run the
 * same session twice in one private HOME — once with its own file naming server-everything,
 * -memory and -filesystem direct, then after `mcpool wire <host> --write` — with the daemon
 * down (bridge entries, which start it) and again with it up (the perl relay's entries) — and
 * what it shows its model or its user of the servers must be equal: the MCP tools (names,
 * descriptions, input schemas), the servers' instructions, and one call's result per server
 * (real-hosts.ts). One daemon serves the file; the hosts' sessions run beside each other.
 * Opt-in: MCPOOL_REAL_HOSTS=1 or CI=true.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELAY_NAME } from "../../src/cli/hosts/pipe-entry.js";
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

/**
 * The ways `mcpool wire --write` writes a host's entries: with the daemon down, bridge entries
 * (`mcpool bridge --server ID`, which start the daemon); with it up, the perl relay's.
 */
const ENTRIES = {
  bridge: (text: string): boolean =>
    count(text, RELAY_NAME) === 0 && count(text, "--server") === SERVER_IDS.length,
  relay: (text: string): boolean => count(text, RELAY_NAME) === SERVER_IDS.length,
};
type Side = "direct" | keyof typeof ENTRIES;

const count = (text: string, part: string): number => text.split(part).length - 1;

/** `views` as a one-step transcript each, for the suite's comparison (`path: direct → pooled`). */
const compareViews = (direct: View, pooled: View): string[] =>
  differences([{ op: "view", result: direct }], [{ op: "view", result: pooled }]);

describe.runIf(REAL_HOSTS)(
  `real hosts see through mcpool wire what they see direct${REAL_HOSTS ? "" : ` (${REAL_HOSTS_OFF})`}`,
  () => {
    let world: RealWorld;
    const apis: StandIn[] = [];
    let hosts: ViewedHost[] = [];
    /** Each host's view on each side, or what stopped it. */
    const seen = new Map<string, Partial<Record<Side, View | Error>>>();
    const took: string[] = [];

    /** Each host's view in a labelled run, all beside each other; a failure stays the host's. */
    const viewAll = async (prefix: string, side: Side): Promise<void> => {
      await Promise.all(
        hosts.map(async (host) => {
          const mine = seen.get(host.wire)!;
          if (mine[side] !== undefined) return;
          const started = Date.now();
          try {
            mine[side] = await host.view(prefix, world, `${host.wire}-${side}`);
            took.push(`${host.wire} ${side} ${Date.now() - started} ms`);
          } catch (error) {
            mine[side] = error as Error;
          }
        }),
      );
    };

    /** The hosts' own files direct again, then `mcpool wire <host> --write` as the user runs it. */
    const wireAll = async (side: keyof typeof ENTRIES): Promise<void> => {
      for (const host of hosts) {
        host.configure(world);
        const wired = await world.cli(["wire", host.wire, "--write"]);
        const text = readFileSync(host.file(world), "utf8");
        // Every server's entry goes to the user's daemon, or the pooled run proves nothing.
        if (
          wired.code !== 0 ||
          count(text, world.socket) !== SERVER_IDS.length ||
          !ENTRIES[side](text)
        ) {
          seen.get(host.wire)![side] = new Error(
            `wire ${host.wire} (${side}): ${wired.stdout}\n${text}`,
          );
        }
      }
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
        const openai = await standIn("fake-openai.mjs", record("openai"), MODEL_TOOL_NAME.codex);
        apis.push(openai);
        hosts = [claudeCode(anthropic), geminiCli(gemini), codexAppServerHost(openai)];
        for (const host of hosts) {
          seen.set(host.wire, {});
          host.configure(world);
        }
        await viewAll(prefix, "direct");
        // Wired while the daemon is down: the hosts' entries start it.
        await wireAll("bridge");
        await viewAll(prefix, "bridge");
        // Wired again with the daemon up.
        await serversReady(world);
        await wireAll("relay");
        await viewAll(prefix, "relay");
      },
      INSTALL_MS + 6 * HOST_MS,
    );

    afterAll(async () => {
      // For a look at what each host saw, and how long each run took: DIFF_OUT=<file>.
      const out = process.env.DIFF_OUT;
      if (out !== undefined) {
        const shown = (_key: string, v: unknown): unknown => (v instanceof Error ? v.stack : v);
        const views = Object.fromEntries(seen);
        writeFileSync(out, JSON.stringify({ took, views }, shown, 2));
      }
      for (const api of apis) await api.stop();
      await world?.remove();
    });

    describe.each(Object.keys(ENTRIES))("wired with %s entries", (side) => {
      it.each(["claude-code", "gemini", "codex"])(
        "%s: the MCP tools, the servers' instructions and one call per server are what they are direct",
        (wire) => {
          const mine = seen.get(wire)!;
          const [direct, pooled] = [mine.direct, mine[side as Side]];
          if (direct instanceof Error) throw direct;
          if (pooled instanceof Error) throw pooled;
          // Not an empty pair: direct the host saw every server's tools and made every call.
          expect(JSON.stringify(direct!.tools ?? direct!.status)).toContain("read_graph");
          // Every call was made (Codex declares no roots: it is offered no get-roots-list).
          const made = wire === "codex" ? CALLS.length - 1 : CALLS.length;
          expect((direct!.results as unknown[]).length).toBe(made);
          const model = direct!.model as { outputs: unknown[] } | undefined;
          if (model !== undefined) expect(model.outputs.length).toBe(made);
          expect(compareViews(direct!, pooled!)).toEqual([]);
        },
      );
    });
  },
);
