/**
 * The real frameworks, each installed pinned from npm (test/helpers/real-hosts.ts): the AI
 * SDK's MCP client, LangChain's MCP adapters and Mastra's MCPClient, run with a bare
 * environment (PATH and HOME only: the MCP SDK's default, no XDG_RUNTIME_DIR) over the
 * entries `mcpool wire` writes — the perl relay (daemon up at wire time) and `mcpool bridge
 * --server ID --socket …` (no stock pipe) — make a call to each pooled server through the
 * user's daemon, and leave no second daemon ("a framework with a bare
 * environment makes its calls through the user's daemon and no second daemon exists
 * afterwards"; with the daemon down, the entries start it). Opt-in: MCPOOL_REAL_HOSTS=1
 * or CI=true.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "jsonc-parser";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RELAY_NAME } from "../../src/cli/hosts/pipe-entry.js";
import {
  CALLS,
  directToolLists,
  FRAMEWORKS,
  restartDaemon,
  runFramework,
  runFrameworkAcross,
  type FrameworkRun,
} from "../helpers/real-hosts-frameworks.js";
import {
  expectOneUserDaemon,
  INSTALL_MS,
  installed,
  REAL_HOSTS,
  REAL_HOSTS_OFF,
  realWorld,
  SERVER_IDS,
  serversReady,
  type RealWorld,
  type Stdio,
} from "../helpers/real-hosts.js";

/** One framework run: three entries spawned, listed and called, on a loaded machine. */
const TEST_MS = 120_000;

type Kind = "pipe" | "bridge";

/** What each call answers through the pool, from the servers the rows start. */
function expectAnswers(run: FrameworkRun, world: RealWorld): void {
  for (const id of SERVER_IDS) {
    expect(run.tools[id], JSON.stringify(run.tools)).toContain(
      CALLS.find((c) => c.server === id)!.tool,
    );
  }
  const text = (server: string) => run.calls.find((c) => c.server === server)!;
  expect(text("everything")).toMatchObject({ isError: false });
  expect(text("everything").text).toContain("Echo: through the pool");
  expect(text("memory").text).toContain("entities");
  // server-filesystem's directory is the row's: the daemon's server answered.
  expect(text("filesystem").text).toContain(world.project);
}

describe.runIf(REAL_HOSTS)(
  `real frameworks through the user's daemon, with a bare environment${REAL_HOSTS ? "" : ` (${REAL_HOSTS_OFF})`}`,
  () => {
    let prefix: string;

    beforeAll(async () => {
      prefix = await installed("frameworks");
    }, INSTALL_MS + 30_000);

    // The frameworks side by side, each with its own world (a private HOME, its own runtime
    // directory and daemon, which its cases stop and restart); one framework's cases in order.
    describe.concurrent.each(FRAMEWORKS)("%s", (framework) => {
      let world: RealWorld;
      const entries = {} as Record<Kind, Record<string, Stdio>>;

      /** `mcpool wire cursor --write` from the login shell with `path`: the entries it wrote. */
      const wire = async (path?: string): Promise<Record<string, Stdio>> => {
        const file = join(world.home, ".cursor", "mcp.json");
        mkdirSync(join(world.home, ".cursor"), { recursive: true });
        writeFileSync(file, JSON.stringify({ mcpServers: world.rows }, null, 2));
        const wired = await world.cli(["wire", "cursor", "--write"], path);
        expect(wired.code, wired.stdout).toBe(0);
        return (parse(readFileSync(file, "utf8")) as { mcpServers: Record<string, Stdio> })
          .mcpServers;
      };

      /** The calls each pooled server has served in the last minute, by the daemon's count. */
      const callsServed = async (): Promise<Record<string, number>> =>
        Object.fromEntries(
          (await world.status()).servers.map((s) => [s.id, s.resources?.callsLastMinute ?? 0]),
        );

      beforeAll(async () => {
        world = realWorld();
        await world.serve();
        await serversReady(world);
        entries.pipe = await wire();
        // No stock pipe on PATH: `mcpool bridge --server ID --socket …` (node is absolute).
        entries.bridge = await wire(mkdtempSync(join(world.home, "no-pipe-")));
        for (const id of SERVER_IDS) {
          expect(entries.pipe[id]!.args, id).toContain(world.socket);
          expect(entries.pipe[id]!.args[0], id).toMatch(RELAY_NAME);
          expect(entries.bridge[id]!.args, id).toEqual(
            expect.arrayContaining(["bridge", "--server", id, "--socket", world.socket]),
          );
        }
      }, 60_000);

      afterEach(async () => {
        // Each test starts from the user's daemon up, as it was.
        if (world.daemons().length === 0) {
          await world.serve();
          await serversReady(world);
        }
      });

      afterAll(async () => {
        await world?.remove();
      });

      /** The framework's lists with the servers direct: one run, the oracle of both kinds. */
      let listedDirect: Promise<FrameworkRun> | undefined;

      const cases = (["pipe", "bridge"] as const).map((kind) => ({ framework, kind }));

      it.sequential.each(cases)(
        "$framework calls every pooled server through the user's daemon over $kind entries, and no second daemon exists",
        async ({ kind }) => {
          const pid = await expectOneUserDaemon(world);
          const before = await callsServed();

          const run = await runFramework(prefix, framework, entries[kind], CALLS, world.bare);

          expectAnswers(run, world);
          const after = await callsServed();
          for (const id of SERVER_IDS) expect(after[id]!, id).toBeGreaterThan(before[id]!);
          expect(await expectOneUserDaemon(world)).toBe(pid);
        },
        TEST_MS,
      );

      it.sequential.each(cases)(
        "$framework's sessions over $kind entries answer again after a daemon restart, with nothing restarted by hand",
        async ({ kind }) => {
          const before = await expectOneUserDaemon(world);
          const run = await runFrameworkAcross(
            prefix,
            framework,
            entries[kind],
            CALLS,
            CALLS,
            async () => {
              await restartDaemon(world);
              await serversReady(world);
            },
            world.bare,
          );

          expectAnswers(run, world);
          // The same sessions, through the new daemon.
          expectAnswers({ ...run, calls: run.then ?? [] }, world);
          expect(await expectOneUserDaemon(world)).not.toBe(before);
        },
        2 * TEST_MS,
      );

      it.sequential.each(cases)(
        "$framework lists through $kind entries exactly the tools it lists with the servers direct (its own capabilities, not the pool's)",
        async ({ kind }) => {
          listedDirect ??= directToolLists(prefix, framework, world);
          const direct = await listedDirect;
          const pooled = await runFramework(prefix, framework, entries[kind], [], world.bare);
          expect(pooled.tools).toEqual(direct.tools);
        },
        2 * TEST_MS,
      );

      it.sequential(
        `${framework} with the daemon down: its relay entries start the user's daemon, answer, and no second one`,
        async () => {
          await world.stopDaemons();
          expect(world.daemons()).toEqual([]);

          const run = await runFramework(prefix, framework, entries.pipe, CALLS, world.bare);

          expectAnswers(run, world);
          await expectOneUserDaemon(world);
        },
        TEST_MS,
      );
    });
  },
);
