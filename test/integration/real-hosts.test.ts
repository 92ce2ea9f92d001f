/**
 * The real hosts, each installed pinned from npm (test/helpers/real-hosts.ts), with a private
 * HOME and the user's daemon serving server-everything, -memory and -filesystem: the host's
 * file holds the three servers direct, `mcpool wire <host> --write` rewrites it (the path
 * users take), and the host's own list — `claude mcp list`, `gemini mcp list`, `qwen mcp
 * list`, `opencode mcp list`, Codex app-server's `mcpServerStatus/list` — shows every pooled
 * server connected ("the wired entry lists every pooled server as
 * connected"; "daemon down → the daemon comes up or the host's error names mcpool").
 * Opt-in: MCPOOL_REAL_HOSTS=1 or CI=true.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RELAY_NAME } from "../../src/cli/hosts/pipe-entry.js";
import { waitFor } from "../helpers/processes.js";
import { codexServerStatus, REAL_HOSTS_CLI, type Listed } from "../helpers/real-hosts-cli.js";
import {
  daemonAnswers,
  expectOneUserDaemon,
  INSTALL_MS,
  installed,
  lanes,
  REAL_HOSTS,
  REAL_HOSTS_OFF,
  realWorld,
  SERVER_IDS,
  serversReady,
  type RealWorld,
} from "../helpers/real-hosts.js";

/** One host's test: a daemon start, a wire, a host list that starts three entries. */
const TEST_MS = 150_000;

/**
 * How many hosts run at once: each host's list starts a daemon's three servers and three
 * entries, and a host gives its servers only seconds to connect. With three at once on the
 * loaded two-core machine, Claude Code's tools fetch timed out on the entries that start the
 * daemon; two at once it did not.
 */
const HOST_LANES = 2;

const count = (text: string, part: string): number => text.split(part).length - 1;

/** Every pooled server is in the host's list and connected. */
function expectAllConnected(listed: Record<string, Listed>): void {
  for (const id of SERVER_IDS) {
    expect(listed[id]?.connected, `${id} in ${JSON.stringify(listed, null, 2)}`).toBe(true);
  }
}

describe.runIf(REAL_HOSTS)(
  `real hosts' own server lists through mcpool wire${REAL_HOSTS ? "" : ` (${REAL_HOSTS_OFF})`}`,
  () => {
    let prefix: string;

    beforeAll(async () => {
      prefix = await installed("hosts");
    }, INSTALL_MS + 30_000);

    // The hosts side by side, each in its own world (a private HOME, its own runtime
    // directory and daemon socket), HOST_LANES at a time; one host's cases stay in order.
    describe.concurrent.each(
      lanes(REAL_HOSTS_CLI, HOST_LANES).map((hosts) => ({
        names: hosts.map((host) => host.wire).join(", "),
        hosts,
      })),
    )("$names, one after another", ({ hosts }) => {
      describe.sequential.each(hosts)("$wire", (host) => {
        let world: RealWorld;

        /** The host's file direct, then `mcpool wire --write` from the login shell. */
        const wire = async (): Promise<string> => {
          host.configure(world);
          const wired = await world.cli(["wire", host.wire, "--write"]);
          expect(wired.code, wired.stdout).toBe(0);
          const text = readFileSync(host.file(world), "utf8");
          // Every entry names the socket it was wired to.
          expect(count(text, world.socket), text).toBe(SERVER_IDS.length);
          return text;
        };

        /**
         * After a host started the daemon through its entries: the user's daemon comes up and
         * stays, never a second — OpenCode, which ends each server's whole process tree as it
         * exits, included: the daemon an entry starts is nobody's child (client/src/dial.ts).
         * A host served from the daemon's recorded answers (a cold entry) may be done before
         * that daemon listens, and the daemons its other entries started may still be giving
         * way: wait for one daemon to answer and the rest to be gone, then look.
         */
        const expectStartedDaemon = async (): Promise<void> => {
          await waitFor(
            () => daemonAnswers(world),
            30_000,
            "the daemon the entries started to answer",
          );
          await waitFor(
            () => world.daemons().length === 1,
            30_000,
            "one daemon of this HOME, the others given way",
          );
          await expectOneUserDaemon(world);
        };

        beforeAll(() => {
          world = realWorld();
        });

        afterEach(async () => {
          await world.stopDaemons();
        });

        afterAll(async () => {
          await world?.remove();
        });

        it(
          "wired with the daemon up (perl relay entries), lists every pooled server as connected, through the one daemon",
          async () => {
            const pid = await world.serve();
            await serversReady(world);
            const text = await wire();
            expect(count(text, RELAY_NAME), text).toBe(SERVER_IDS.length);

            expectAllConnected(await host.list(prefix, world));
            expect(await expectOneUserDaemon(world)).toBe(pid);
          },
          TEST_MS,
        );

        it(
          "with the daemon down, its relay entries start the user's daemon and list connected, or say mcpool",
          async () => {
            await world.serve();
            await serversReady(world);
            await wire();
            await world.stopDaemons();
            expect(world.daemons()).toEqual([]);

            const listed = await host.list(prefix, world);
            for (const id of SERVER_IDS) {
              const seen = listed[id];
              // Connected (the entry started the daemon), or the host shows mcpool's own error.
              expect(
                seen?.connected === true || /mcpool: /.test(seen?.text ?? ""),
                `${id} in ${JSON.stringify(listed, null, 2)}`,
              ).toBe(true);
            }
            if (SERVER_IDS.every((id) => listed[id]!.connected)) await expectStartedDaemon();
            else expect(world.daemons()).toEqual([]);
          },
          TEST_MS,
        );

        it(
          "with the daemon down and entries that cannot start it (the node they name is gone), the host's list shows mcpool's error",
          async () => {
            await world.serve();
            await serversReady(world);
            await wire();
            await world.stopDaemons();
            // As after an nvm switch or an upgrade: the node the relay would run is gone.
            const file = host.file(world);
            const text = readFileSync(file, "utf8");
            expect(count(text, process.execPath), text).toBe(SERVER_IDS.length);
            writeFileSync(
              file,
              text.replaceAll(process.execPath, join(world.home, "gone", "node")),
            );

            const listed = await host.list(prefix, world);
            for (const id of SERVER_IDS) {
              const seen = listed[id]!;
              expect(seen.connected, seen.text).toBe(false);
              if (host.hidesServerErrors !== true) {
                // The relay's answer to `initialize`: what is wrong, and the fix.
                expect(seen.text).toMatch(/mcpool: no daemon answers at /);
                expect(seen.text).toMatch(/mcpool service install|mcpool serve/);
              }
            }
            expect(world.daemons()).toEqual([]);
          },
          TEST_MS,
        );

        it(
          "wired while the daemon is down (bridge entries), lists every pooled server as connected, and no second daemon",
          async () => {
            expect(world.daemons()).toEqual([]);
            const text = await wire();
            expect(count(text, RELAY_NAME), text).toBe(0);
            expect(count(text, "--server"), text).toBe(SERVER_IDS.length);

            expectAllConnected(await host.list(prefix, world));
            await expectStartedDaemon();
          },
          TEST_MS,
        );
      });
    });

    // After the lanes, on its own: not a third host at once.
    describe("Codex's view of each server's tools", () => {
      let world: RealWorld;
      const codex = REAL_HOSTS_CLI.find((host) => host.wire === "codex")!;

      beforeAll(() => {
        world = realWorld();
      });

      afterAll(async () => {
        await world?.stopDaemons();
        await world?.remove();
      });

      /** Each server's tool names, sorted, as `mcpServerStatus/list` shows them. */
      const toolsSeen = async (): Promise<Record<string, string[]>> =>
        Object.fromEntries(
          (await codexServerStatus(prefix, world)).map((s) => [
            s.name,
            Object.keys(s.tools ?? {}).sort(),
          ]),
        );

      /**
       * What Codex sees with its own file naming the servers direct: the same file in both
       * tests, so seen once (an app-server and three servers) and compared with by each.
       */
      let seenDirect: Promise<Record<string, string[]>> | undefined;
      const directTools = (): Promise<Record<string, string[]>> => {
        codex.configure(world);
        seenDirect ??= toolsSeen();
        return seenDirect;
      };

      it(
        "is through the pool what it is direct: the tools the host's own capabilities get",
        async () => {
          // The user's daemon comes up while Codex looks direct (its file names no daemon).
          const [direct] = await Promise.all([
            directTools(),
            world.serve().then(() => serversReady(world)),
          ]);
          const wired = await world.cli(["wire", "codex", "--write"]);
          expect(wired.code, wired.stdout).toBe(0);
          const pooled = await toolsSeen();
          for (const id of SERVER_IDS) expect(direct[id]?.length, id).toBeGreaterThan(0);
          expect(pooled).toEqual(direct);
        },
        TEST_MS,
      );

      it(
        "through one pool-wide catalogue entry (`--catalog --one-entry`): the catalogue's tools in place of every server's, and unwire gives the file back",
        async () => {
          const direct = await directTools();
          const original = readFileSync(codex.file(world), "utf8");
          await world.serve();
          await serversReady(world);
          const wired = await world.cli(["wire", "codex", "--catalog", "--one-entry", "--write"]);
          expect(wired.code, wired.stdout).toBe(0);
          // The catalogue's three tools, the servers' own found through them (no alwaysLoad).
          expect(await toolsSeen()).toEqual({
            mcpool: ["call_tool", "describe_tool", "search_tools"],
          });
          const unwired = await world.cli(["unwire", "codex", "--write"]);
          expect(unwired.code, unwired.stdout).toBe(0);
          expect(readFileSync(codex.file(world), "utf8")).toBe(original);
          expect(await toolsSeen()).toEqual(direct);
        },
        TEST_MS,
      );
    });
  },
);
