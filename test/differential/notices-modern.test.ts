/**
 * A server's unasked notifications reach only the 2026-07-28 hosts its process serves: the
 * server of notices.test.ts (test/fixtures/roots-notices.mjs, 2025-11-25, whose log lines
 * name its client's roots) pooled beside a 2026-07-28-only server, so the whole pool serves
 * a dual-era host (SDK v2 on `auto`) in 2026-07-28; direct, that host falls back to 2025-11-25
 * with the server, and hears what its own server process sends. Through the pool a modern
 * host hears a log line on a request in flight that asked for its level in the envelope, and
 * a list change on its listen stream: two hosts of two projects, a call in flight each at once
 * (the server holds both until both have come), each hear their own project's log lines and
 * list changes and never the other's; and a host with roots (its project's child) hears no
 * change when the row's own connection adds a tool — through the SDK bridge, the lean bridge
 * and the perl relay.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { describe, expect, it } from "vitest";
import { bridgeCommand, scopeSocket, stringEnv, type BridgePath } from "../helpers/bridge.js";
import { testHome } from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { growRow } from "./row-growth.js";
import { pooling } from "./run.js";
import { matrixServers, nodeServer } from "./servers.js";

const server = nodeServer("notices", [fixture("roots-notices.mjs")]);

/** The envelope key of the level a 2026-07-28 request asks its server's log lines at. */
const LOG_LEVEL = "io.modelcontextprotocol/logLevel";

/** How long a host may take to hear the last notice its server sends it, ms. */
const HEARD_MS = 15_000;

const LIST_CHANGES = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
] as const;

/** A dual-era host and what it heard unasked: log lines (`<level> <data>`) and list changes. */
interface Heard {
  client: Client;
  era: string;
  notices: string[];
  /** A tool of the notices server, by its own name (`prefix` puts the pool's before it). */
  call(name: string, args?: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

describe("a server's log lines and list changes reach the 2026-07-28 hosts its process serves", () => {
  const home = testHome("mcpool-differential-notices-modern-");
  const modern = matrixServers(home.dir).find((s) => s.id === "modern")!;
  pooling(home, [server, modern]);

  function project(name: string): string {
    const dir = join(home.dir, `project-${name}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  type Way = "direct" | BridgePath;

  /** A host with roots (its project, `root`) on `way`, listening when modern. */
  async function open(way: Way, root: string): Promise<Heard> {
    const env = stringEnv(home.env);
    let target = { command: server.command, args: server.args };
    if (way !== "direct") {
      const args = ["--socket", home.socketPath];
      await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "the pool's MCP socket");
      target = bridgeCommand(home, args, way);
    }
    const client = new Client(
      { name: "differential-host", version: "1.0.0" },
      {
        capabilities: { roots: { listChanged: true } },
        versionNegotiation: { mode: "auto" },
      },
    );
    const roots = [{ uri: pathToFileURL(root).href, name: "project" }];
    client.setRequestHandler("roots/list", () => ({ roots }));
    const notices: string[] = [];
    client.setNotificationHandler("notifications/message", (n) => {
      notices.push(`${n.params.level} ${JSON.stringify(n.params.data)}`);
    });
    for (const method of LIST_CHANGES) {
      client.setNotificationHandler(method, () => void notices.push(method));
    }
    await client.connect(new StdioClientTransport({ ...target, env, stderr: "ignore" }));
    const era = client.getProtocolEra() ?? "unknown";
    if (era === "modern") {
      await client.listen({
        toolsListChanged: true,
        resourcesListChanged: true,
        promptsListChanged: true,
      });
    }
    const prefix = way === "direct" ? "" : `${server.id}__`;
    return {
      client,
      era,
      notices,
      call: (name, args = {}) =>
        client.callTool({
          name: `${prefix}${name}`,
          arguments: args,
          _meta: { [LOG_LEVEL]: "info" },
        }),
      close: () => client.close(),
    };
  }

  /** Resolves once `host` heard `notice`, or its bound passed (the comparison then shows it). */
  async function heard(host: Heard, notice: string): Promise<void> {
    await waitFor(() => host.notices.includes(notice), HEARD_MS).catch(() => undefined);
  }

  /**
   * Two projects' hosts on `way` (`name`: their projects'), each its roots taken in first
   * (through the pool the host is asked for them then, and told its lists changed, as one
   * that could have listed without them); then what each hears: both call `note` at once,
   * held by the server until both have come, and one makes its server add a tool.
   */
  async function projects(way: Way, name: string): Promise<Record<string, unknown>> {
    const [a, b] = await Promise.all([
      open(way, project(`${name}-a`)),
      open(way, project(`${name}-b`)),
    ]);
    try {
      await Promise.all([a.call("roots"), b.call("roots")]);
      for (const host of [a, b]) host.notices.length = 0;
      const gate = mkdtempSync(join(home.dir, "gate-"));
      const notes = Promise.all([a.call("note", { gate }), b.call("note", { gate })]);
      const waiting = (): number =>
        readdirSync(gate).filter((f) => f.startsWith("waiting-")).length;
      await waitFor(() => waiting() === 2, 30_000, "both calls to reach their servers");
      writeFileSync(join(gate, "open"), "");
      // Its answers' content: a 2026-07-28 result's envelope is the era's, not the server's.
      const [noteA, noteB] = (await notes).map(
        (result) => (result as { content: unknown }).content,
      );
      await Promise.all([a, b].map((host) => heard(host, "notifications/prompts/list_changed")));
      await a.call("grow");
      await heard(a, "notifications/tools/list_changed");
      // A request after: what was sent to b before has come by its answer.
      await b.call("roots");
      return {
        eras: [a.era, b.era],
        a: { note: noteA, notices: [...a.notices].sort() },
        b: { note: noteB, notices: [...b.notices].sort() },
      };
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }

  /**
   * A host with roots (`name`: its project's), served by its project's child, while the
   * process that serves a caller naming no profile adds a tool (row-growth.ts): its era and
   * the notices it heard, after a request of its own that comes after the change is known.
   */
  async function ownChange(way: Way, name: string): Promise<Record<string, unknown>> {
    const rooted = await open(way, project(name));
    try {
      await rooted.call("roots");
      rooted.notices.length = 0;
      await growRow(home, server, way !== "direct");
      await rooted.call("roots");
      return { era: rooted.era, notices: rooted.notices };
    } finally {
      await rooted.close();
    }
  }

  /** Through the pool the hosts speak 2026-07-28, direct 2025-11-25: all else is the same. */
  const eras = (n: number, era: string): string[] => Array.from({ length: n }, () => era);

  it.each(["sdk", "lean", "perl"] as const)(
    "two projects' hosts at once through %s each hear only their own, as direct",
    async (way) => {
      const direct = await projects("direct", way);
      expect(direct.eras).toEqual(eras(2, "legacy"));
      // The oracle itself: direct, a host hears nothing of the other project.
      expect(JSON.stringify(direct.b)).not.toContain(`project-${way}-a`);
      const pooled = await projects(way, way);
      expect(pooled.eras).toEqual(eras(2, "modern"));
      expect({ ...pooled, eras: direct.eras }).toEqual(direct);
    },
    180_000,
  );

  it.each(["sdk", "lean", "perl"] as const)(
    "the row's own tool list change through %s reaches none of another connection's hosts, as direct",
    async (way) => {
      const direct = await ownChange("direct", `own-${way}`);
      expect(direct).toEqual({ era: "legacy", notices: [] });
      const pooled = await ownChange(way, `own-${way}`);
      expect(pooled).toEqual({ era: "modern", notices: direct.notices });
    },
    120_000,
  );
});
