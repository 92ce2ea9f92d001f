/**
 * Runs matrix cells: each cell's session direct (once per server, client and capability set)
 * and through its entry, the transcripts normalised and compared. A server's sessions run one
 * after another (a pooled server is shared, and a stateful one must be left as found); servers
 * run side by side.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { serversReady, startDaemon, type RunningDaemon, type TestHome } from "../helpers/daemon.js";
import { waitFor } from "../helpers/processes.js";
import { openHost, type Entry } from "./entries.js";
import type { CapabilitySet, ClientKind, Host } from "./host.js";
import { compare, normalise } from "./normalise.js";
import type { MatrixServer } from "./servers.js";
import { runSession, type Step } from "./session.js";

export interface Cell {
  server: string;
  client: ClientKind;
  capabilities: CapabilitySet;
  entry: Exclude<Entry, "direct">;
}

export const cellName = (c: Cell): string =>
  `${c.server} · ${c.client} ${c.capabilities} · ${c.entry}`;

/** The project folder a host with roots declares (the same direct and through the pool). */
export function projectOf(home: TestHome, client: ClientKind): string {
  const dir = join(home.dir, `project-${client}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function transcript(
  home: TestHome,
  server: MatrixServer,
  cell: Omit<Cell, "entry">,
  entry: Entry,
): Promise<Step[]> {
  const spec = {
    client: cell.client,
    capabilities: cell.capabilities,
    root: projectOf(home, cell.client),
  };
  let host;
  try {
    host = await openHost(home, server, spec, entry);
  } catch (error) {
    return [{ op: "connect", error: { message: (error as Error).message } }];
  }
  try {
    const taken = server.script.rootsTaken;
    if (entry === "direct" && spec.capabilities === "roots" && taken !== undefined) {
      await rootsTakenIn(host, taken, spec.root);
    }
    return await runSession(host, server.script);
  } finally {
    await host.close().catch(() => undefined);
  }
}

/** The daemon of a test file that `pooling` started. */
export interface Pooled {
  /** Stops the daemon and starts a new one on the same home, its servers ready. */
  restart(): Promise<void>;
}

/**
 * A daemon in `home` pooling `servers`, for a test file: started, its servers ready, before
 * the file's tests; stopped and `home` removed after them. `extra` adds keys to a server's
 * row (e.g. `hiddenTools`).
 */
export function pooling(
  home: TestHome,
  servers: readonly MatrixServer[],
  extra: (server: MatrixServer) => Record<string, unknown> = () => ({}),
): Pooled {
  let daemon: RunningDaemon | undefined;
  const start = async (): Promise<void> => {
    daemon = await startDaemon(home);
    await serversReady(home, 60_000);
  };
  beforeAll(async () => {
    home.writeConfig(
      Object.fromEntries(
        servers.map((s) => [s.id, { command: s.command, args: s.args, env: s.env, ...extra(s) }]),
      ),
    );
    await start();
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop();
    home.remove();
  });
  return {
    async restart() {
      await daemon?.stop();
      await start();
    },
  };
}

/** Resolves once `probe`'s answer on `host` names `root` (bounded); the probes leave no trace. */
export async function rootsTakenIn(
  host: Host,
  probe: { name: string; arguments: Record<string, unknown> },
  root: string,
): Promise<void> {
  const asked = host.asked.length;
  await waitFor(
    async () => JSON.stringify(await host.request("tools/call", probe)).includes(root),
    15_000,
    `the server to take the root ${root} in`,
  );
  host.asked.splice(asked);
}

/** The client library has no handshake and lists tools as a model is offered them. */
export function libraryView(steps: readonly Step[]): Step[] {
  return steps.flatMap((step): Step[] => {
    if (step.op === "handshake") {
      const r = step.result as { capabilities?: unknown; instructions?: unknown };
      return [
        { op: "handshake", result: { capabilities: r.capabilities, instructions: r.instructions } },
      ];
    }
    if (step.op !== "tools/list") return [step];
    if ((step.params as { cursor?: string } | undefined)?.cursor !== undefined) return [];
    const all = steps.filter((s) => s.op === "tools/list");
    const tools = all.flatMap(
      (s) => (s.result as { tools?: Record<string, unknown>[] })?.tools ?? [],
    );
    const view = tools.map((t) => ({
      name: t.name,
      description: t.description ?? "",
      inputSchema: t.inputSchema,
    }));
    return [{ op: "tools/list", params: {}, result: { tools: view } }];
  });
}

/** Direct sessions at once beside a server's chain of pooled ones. */
const DIRECT_AT_ONCE = 2;

/**
 * Each cell's differences (none: the cell passes), for the cells of one server, in order.
 * Through the pool a server's sessions run one after another (its pooled server is shared);
 * a direct session has its own child, so unless the server keeps state on disk that the pool's
 * shares, the direct ones run beside that chain, DIRECT_AT_ONCE at a time.
 */
export async function runServer(
  home: TestHome,
  server: MatrixServer,
  cells: readonly Cell[],
): Promise<Map<Cell, string[]>> {
  const keyOf = (cell: Cell): string => `${cell.client} ${cell.capabilities}`;
  const direct = new Map<string, Promise<Step[]>>();
  const directOf = (cell: Cell): Promise<Step[]> => {
    const key = keyOf(cell);
    if (!direct.has(key)) direct.set(key, transcript(home, server, cell, "direct").then(normalise));
    return direct.get(key)!;
  };
  if (server.sharedDisk !== true) {
    // Not awaited here: every key's session is awaited by the chain below, errors included.
    const firsts = [...new Map(cells.map((cell) => [keyOf(cell), cell])).values()];
    for (let n = 0; n < DIRECT_AT_ONCE; n++) {
      void (async () => {
        for (let next = firsts.shift(); next !== undefined; next = firsts.shift()) {
          await directOf(next).catch(() => undefined);
        }
      })();
    }
  }
  const out = new Map<Cell, string[]>();
  for (const cell of cells) {
    const left = await directOf(cell);
    const right = normalise(await transcript(home, server, cell, cell.entry));
    const library = cell.entry === "library";
    out.set(
      cell,
      library ? compare(libraryView(left), libraryView(right)) : compare(left, right, false),
    );
  }
  return out;
}
