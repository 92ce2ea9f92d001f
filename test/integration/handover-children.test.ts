/**
 * `mcpool restart` hands over the children a row serves besides its own: a project's child
 * of server-filesystem (started for the roots its host declared) keeps its process and its
 * allowed directory, and the host's next call after the hand-over answers from it; a
 * per-conversation server's child keeps its process and its count for its conversation, also
 * when one conversation has children on two such rows.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import { stdioBridge } from "../helpers/bridge.js";
import { runCliAsync } from "../helpers/daemon.js";
import { testFleet } from "../helpers/fleet.js";
import {
  alive,
  daemonsFor,
  fixture,
  referenceServer,
  stopAll,
  waitFor,
} from "../helpers/processes.js";

const filesystemBin = referenceServer("server-filesystem");

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  return (result.content as { type: string; text?: string }[])
    .map((part) => part.text ?? "")
    .join("\n");
}

/** The pids of row `id`'s children for host profiles. */
async function profilePids(agent: PoolClient, id: string): Promise<number[]> {
  const state = (await agent.state()).find((s) => s.id === id);
  return (state?.profiles ?? []).flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
}

// Each test its own home and daemon: they run side by side, each with a longer bound.
describe.concurrent(
  "a hand-over restart and the children a row serves besides its own",
  { timeout: 90_000 },
  () => {
    it("keeps a project's server-filesystem child, same pid and root, for the host's next call", async (context) => {
      const fleet = testFleet(context);
      const own = realpathSync(mkdtempSync(join(tmpdir(), "mcpool-handover-row-")));
      const project = realpathSync(mkdtempSync(join(tmpdir(), "mcpool-handover-project-")));
      const h = fleet.home();
      h.writeConfig({ fs: { command: process.execPath, args: [filesystemBin, own] } });
      try {
        await fleet.daemon(h);
        const host = fleet.keep(
          await stdioBridge(h, ["--server", "fs"], { roots: { listChanged: true } }),
        );
        host.client.setRequestHandler(ListRootsRequestSchema, () => ({
          roots: [{ uri: pathToFileURL(project).href, name: "project" }],
        }));
        try {
          const allowed = async (): Promise<string> =>
            textOf(await host.client.callTool({ name: "list_allowed_directories", arguments: {} }));
          expect(await allowed()).toContain(project);
          const watcher = await fleet.agent(h, "watcher");
          const [childPid] = await profilePids(watcher, "fs");
          expect(childPid).toBeGreaterThan(0);

          const restart = await runCliAsync(h, "restart", "--json");
          expect(restart.stderr).toBe("");
          expect(restart.code).toBe(0);
          const handed = JSON.parse(restart.stdout) as { pid: number; children?: string[] };
          expect(handed.children).toEqual([expect.stringMatching(/^fs for /)]);

          // The same host, never reconnected: its next call answers from the same child.
          const after = await allowed();
          expect(after).toContain(project);
          expect(after).not.toContain(own);
          const agent = await fleet.agent(h, "after");
          expect(await profilePids(agent, "fs")).toEqual([childPid]);
          const status = await agent.status();
          expect(status.pid).toBe(handed.pid);
          expect(status.handover?.children).toEqual(handed.children);

          expect((await runCliAsync(h, "shutdown")).code).toBe(0);
          await waitFor(
            () => !alive(handed.pid) && !alive(childPid as number),
            20_000,
            "the new daemon and the adopted project child to end",
          );
        } finally {
          await host.close();
        }
      } finally {
        await stopAll(daemonsFor(h.socketPath));
        rmSync(own, { recursive: true, force: true });
        rmSync(project, { recursive: true, force: true });
      }
    });

    it("keeps a legacy host's child of a row held in 2026-07-28, same pid, for the host's next call", async (context) => {
      const fleet = testFleet(context);
      const h = fleet.home();
      h.writeConfig({ dual: { command: process.execPath, args: [fixture("dual-stdio.mjs")] } });
      try {
        await fleet.daemon(h);
        const watcher = await fleet.agent(h, "watcher");
        await waitFor(
          async () => (await watcher.state()).some((s) => s.id === "dual" && s.era === "modern"),
          30_000,
          "the row to be held in 2026-07-28",
        );
        // The SDK's v1 client opens with initialize: a legacy host, served by a child of its own.
        const host = fleet.keep(await stdioBridge(h, ["--server", "dual"]));
        try {
          const era = async (): Promise<string> =>
            (
              JSON.parse(textOf(await host.client.callTool({ name: "whoami", arguments: {} }))) as {
                era: string;
              }
            ).era;
          expect(await era()).toBe("legacy");
          const [childPid] = await profilePids(watcher, "dual");
          expect(childPid).toBeGreaterThan(0);

          const restart = await runCliAsync(h, "restart", "--json");
          expect(restart.stderr).toBe("");
          expect(restart.code).toBe(0);
          const handed = JSON.parse(restart.stdout) as { children?: string[] };
          expect(handed.children).toEqual([expect.stringMatching(/^dual for legacy /)]);

          // The same host, never reconnected: its next call answers from the same child.
          expect(await era()).toBe("legacy");
          const agent = await fleet.agent(h, "after");
          expect(await profilePids(agent, "dual")).toEqual([childPid]);
        } finally {
          await host.close();
        }
      } finally {
        await stopAll(daemonsFor(h.socketPath));
      }
    });

    it("keeps a conversation's own child, same pid and count, for the host's next call", async (context) => {
      const fleet = testFleet(context);
      const h = fleet.home();
      const counter = { command: process.execPath, args: [fixture("counter.mjs")] };
      h.writeConfig({ counter: { ...counter, session: "conversation" } });
      try {
        await fleet.daemon(h);
        // Each bridge is a conversation of its own: two hosts, two children, two counts.
        const host = fleet.keep(await stdioBridge(h));
        const other = fleet.keep(await stdioBridge(h));
        try {
          const count = async (client: Client): Promise<string> =>
            textOf(await client.callTool({ name: "counter__count", arguments: {} }));
          expect(await count(host.client)).toMatch(/^1 /);
          const [, pid] = (await count(host.client)).split(" ");
          const [, otherPid] = (await count(other.client)).split(" ");
          expect(otherPid).not.toBe(pid);

          const restart = await runCliAsync(h, "restart", "--json");
          expect(restart.stderr).toBe("");
          expect(restart.code).toBe(0);
          const handed = JSON.parse(restart.stdout) as { pid: number; children?: string[] };
          expect(handed.children).toEqual([
            "counter for a conversation",
            "counter for a conversation",
          ]);

          // The same hosts, never reconnected: each conversation goes on with its own child.
          expect(await count(host.client)).toBe(`3 ${pid}`);
          expect(await count(other.client)).toBe(`2 ${otherPid}`);

          expect((await runCliAsync(h, "shutdown")).code).toBe(0);
          await waitFor(
            () => !alive(handed.pid) && !alive(Number(pid)) && !alive(Number(otherPid)),
            20_000,
            "the new daemon and the adopted conversations' children to end",
          );
        } finally {
          await Promise.all([host.close(), other.close()]);
        }
      } finally {
        await stopAll(daemonsFor(h.socketPath));
      }
    });
    it("keeps one conversation's children on two conversation rows, each with its pid", async (context) => {
      const fleet = testFleet(context);
      const h = fleet.home();
      const counter = {
        command: process.execPath,
        args: [fixture("counter.mjs")],
        session: "conversation",
      };
      h.writeConfig({ first: counter, second: counter });
      try {
        await fleet.daemon(h);
        const host = fleet.keep(await stdioBridge(h));
        try {
          const count = async (id: string): Promise<string> =>
            textOf(await host.client.callTool({ name: `${id}__count`, arguments: {} }));
          const [, firstPid] = (await count("first")).split(" ");
          const [, secondPid] = (await count("second")).split(" ");
          expect(secondPid).not.toBe(firstPid);

          const restart = await runCliAsync(h, "restart", "--json");
          expect(restart.stderr).toBe("");
          expect(restart.code).toBe(0);
          const handed = JSON.parse(restart.stdout) as { pid: number; children?: string[] };
          expect([...(handed.children ?? [])].sort()).toEqual([
            "first for a conversation",
            "second for a conversation",
          ]);

          expect(await count("first")).toBe(`2 ${firstPid}`);
          expect(await count("second")).toBe(`2 ${secondPid}`);

          expect((await runCliAsync(h, "shutdown")).code).toBe(0);
          await waitFor(
            () => !alive(handed.pid) && !alive(Number(firstPid)) && !alive(Number(secondPid)),
            20_000,
            "the new daemon and the adopted conversation's children to end",
          );
        } finally {
          await host.close();
        }
      } finally {
        await stopAll(daemonsFor(h.socketPath));
      }
    });
  },
);
