/**
 * The daemon's MCP sockets: the pool spoken as MCP on Unix sockets, one socket per
 * scope (mcp-socket-paths.ts), one MCP session per connection, so that any byte pipe — `nc
 * -U`, `socat`, a perl one-liner, the lean `mcpool bridge` — is a host's bridge.
 *
 * This is the bridge, hosted in the daemon's process by the composition root (`mcpool
 * serve`), not a part of the daemon: it reaches the pool through one mcpool-client
 * `PoolClient` on the daemon's own socket, shared by every session, and each connection is
 * served by `createBridge()` exactly as `mcpool bridge` serves its stdio — per-caller
 * routing, list changes, resources, prompts and one conversation per connection included.
 *
 * The whole pool is also served in catalog mode (docs/tools-on-demand.md, `bridge --catalog`) on
 * `@catalog.sock`, and with the most-called tools in its first list on `@catalog-auto.sock`.
 *
 * Nothing heavy is loaded until the first connection arrives: an idle daemon keeps only the
 * listening sockets, the SDK's server side and the client come with the first host.
 */
import { rm } from "node:fs/promises";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import type { PoolClient } from "mcpool-client";
import type { HostName } from "../core/session.js";
import type { Bridge } from "../legacy/bridge-server.js";
import type { Opening } from "../lean/cold-answers.js";
import { mcpCatalogSocketPath, mcpSocketDir, mcpSocketPath } from "../lean/mcp-socket-paths.js";
import { answersApart } from "./answers-apart.js";
import { answersBeforeEnd } from "./half-close.js";
import { HostNames } from "./host-names.js";
import { recordOpening } from "./opening-record.js";
import { Listeners } from "./handed-listeners.js";
import { HandingOver } from "./handing-over.js";
import { passesInTurn } from "./passes.js";
import { ScopeListeners } from "./scope-listeners.js";
import { inFolders, privateDir } from "./socket-folder.js";

export { answersApart, type Sending } from "./answers-apart.js";

export interface McpSocketsOptions {
  /** The daemon's socket: the MCP sockets go beside it, the shared client dials it. */
  daemonSocketPath: string;
  /** The pool's server ids now. */
  serverIds(): readonly string[];
  /**
   * Listening sockets a previous daemon handed over, fd by scope: listened on as they are,
   * never bound again, so their paths never go away; one whose scope went is closed.
   */
  inherited?: ReadonlyMap<string, number>;
  /** Calls `listener` when servers may have come or gone; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  /** serverInfo sent to hosts. */
  version: string;
  /** Where what a host cannot be told goes. Default: nowhere. */
  log?: (line: string) => void;
  /**
   * The daemon's connection cap (`mcpool.maxConnections`), shared with its socket: each
   * session takes a place and gives it back when it ends. Default: no cap.
   */
  connections?: SessionCap;
  /**
   * A session of `scope` (a server's id, `@pool`, `@catalog`) opened: what a host asked first
   * and was answered, byte for byte, each time a recorded answer adds to it (cold-answers.ts in
   * src/bridge/lean), for a cold entry to answer the same. Default: nothing is recorded.
   */
  opened?(scope: string, opening: Opening): void;
}

/** What the MCP sockets need of the daemon's connection cap (src/daemon/socket/connection-cap.ts). */
export interface SessionCap {
  /** Counts a new session ("open"), or refuses it ("refused"); `false`: no reserved slot. */
  enter(reserve: false): string;
  /** A counted session ended. */
  leave(): void;
  /** What a refused host is told. */
  message(): string;
  /** Learns which process holds each counted connection, so a refusal can name the most. */
  learnOwners(): Promise<void>;
  /** A counted session checked against its process's share: the refusal's message, if over. */
  share(socket: Socket): Promise<string | undefined>;
}

/** JSON-RPC's first implementation-defined server error: the MCP sessions' refusal. */
const REFUSED_CODE = -32000;

/** One error line in MCP's stdio framing, for no request yet, then the end. */
function refuseSession(socket: Socket, message: string): void {
  const error = { code: REFUSED_CODE, message: `mcpool: ${message}` };
  socket.on("error", () => undefined);
  socket.end(`${JSON.stringify({ jsonrpc: "2.0", id: null, error })}\n`, () => socket.destroy());
}

export interface McpSockets {
  /** The sockets listening now, by scope (a server id, or "" for the pool). */
  readonly paths: ReadonlyMap<string, string>;
  /** Host sessions open now. */
  readonly sessions: number;
  /** Makes the folder and listens on every socket again (as after a removal); sessions go on. */
  renew(): Promise<void>;
  /** Stops listening, ends every session, removes the sockets. Idempotent. */
  close(): Promise<void>;
  /**
   * A hand-over: ends every session, and says each listening socket's fd by scope once a pass under
   * way is over; no pass runs again until resume(). Until letGo() a connection is closed at once.
   */
  hold(): Promise<{ scope: string; fd: number }[]>;
  /**
   * The new daemon was started with the listening sockets: this process closes its listeners
   * (never their paths), so what arrives waits in the sockets' backlog for the new daemon.
   */
  letGo(): void;
  /** The hand-over failed: accepts again, on sockets bound afresh if they were let go. */
  resume(): Promise<void>;
  /** The hand-over went through: ends everything; the sockets and their folder are the new daemon's. */
  abandon(): Promise<void>;
}

/** The scope key of the whole pool. */
const POOL_SCOPE = "";

/**
 * The scope keys of the whole pool in catalog mode: a NUL starts no server
 * id, so these never meet one.
 */
const CATALOG_SCOPES = { "\0catalog": "on", "\0catalog-auto": "auto" } as const;
type CatalogScope = keyof typeof CATALOG_SCOPES;

const catalogOf = (scope: string): "on" | "auto" | undefined =>
  CATALOG_SCOPES[scope as CatalogScope];

/** The socket a scope key listens on, or undefined when it can have none. */
function scopePath(daemonSocketPath: string, scope: string): string | undefined {
  const mode = catalogOf(scope);
  if (mode !== undefined) return mcpCatalogSocketPath(daemonSocketPath, mode);
  return mcpSocketPath(daemonSocketPath, scope === POOL_SCOPE ? undefined : scope);
}

/** The name a scope's first answers are kept under; none for `--catalog=auto` (calls move it). */
const COLD_SCOPES = { [POOL_SCOPE]: "@pool", "\0catalog": "@catalog", "\0catalog-auto": undefined };
const coldScopeOf = (scope: string): string | undefined =>
  Object.hasOwn(COLD_SCOPES, scope) ? COLD_SCOPES[scope as keyof typeof COLD_SCOPES] : scope;

/** A scope key as a log line names it. */
const labelOf = (scope: string): string =>
  catalogOf(scope) !== undefined ? `(pool, --catalog=${catalogOf(scope)})` : scope || "(pool)";

/** What the scope key serves, as createBridge() options. */
function scopeOptions(scope: string): { server?: string; catalog?: { mode: "on" | "auto" } } {
  const mode = catalogOf(scope);
  if (mode !== undefined) return { catalog: { mode } };
  return scope === POOL_SCOPE ? {} : { server: scope };
}

/**
 * At most this many per-server sockets (one descriptor each, in a process whose children need
 * theirs): past it a server's host goes through the SDK bridge, which needs none.
 */
export const MAX_SERVER_SOCKETS = 256;

/** What the first connection loads: the SDK's server side, the bridge and the client. */
interface Loaded {
  client: PoolClient;
  createBridge: typeof import("../legacy/bridge-server.js").createBridge;
  StdioServerTransport: typeof import("@modelcontextprotocol/sdk/server/stdio.js").StdioServerTransport;
}

async function load(daemonSocketPath: string): Promise<Loaded> {
  const [{ connect }, { createBridge }, { StdioServerTransport }] = await Promise.all([
    import("mcpool-client"),
    import("../legacy/bridge-server.js"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
  ]);
  const client = await connect({ clientName: "mcpool-mcp-socket", socketPath: daemonSocketPath });
  return { client, createBridge, StdioServerTransport };
}

/** What serving one connection needs of the MCP sockets around it. */
interface Serving {
  /** The daemon's connection cap, when it has one. */
  cap: SessionCap | undefined;
  /** The connections open now, which `close()` destroys. */
  sockets: Set<Socket>;
  /** The scope's bridge, made on its first connection, and what the first one loaded. */
  bridgeFor(scope: string): Promise<{ bridge: Bridge; loaded: Loaded }>;
  log: (line: string) => void;
  opened: McpSocketsOptions["opened"];
  /** The names the live sessions' hosts go by, on every scope (they share one client). */
  hostNames: HostNames;
}

/**
 * One connection, one MCP session; it ends when either side does — a host that closed only
 * its side (a pipe's stdin EOF) once it has its answers (answersBeforeEnd).
 */
async function serveConnection(scope: string, socket: Socket, serving: Serving): Promise<void> {
  const { cap, sockets, bridgeFor, log } = serving;
  // Nothing is read before the session's transport is wrapped to count requests.
  socket.pause();
  if (cap !== undefined) {
    if (cap.enter(false) === "refused") {
      refuseSession(socket, cap.message());
      return void cap.learnOwners();
    }
    socket.once("close", () => cap.leave());
    const over = await cap.share(socket);
    if (over !== undefined) return refuseSession(socket, over);
  }
  sockets.add(socket);
  let server: { close(): Promise<void> } | undefined;
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    sockets.delete(socket);
    void server?.close().catch(() => undefined);
    socket.destroy();
  };
  socket.once("close", end);
  socket.on("error", end);
  try {
    const { bridge, loaded: ready } = await bridgeFor(scope);
    if (ended) return;
    const transport = new ready.StdioServerTransport(socket, socket);
    answersApart(transport, socket);
    // Either era: the host's opening message says which (era-switch.ts); before it, the
    // entry's line may name the host (host-names.ts).
    const host: HostName = {};
    server = await bridge.serve(transport, host);
    serving.hostNames.take(transport, socket, host, (why) =>
      log(`mcpool: MCP socket ${labelOf(scope)}: ${why}`),
    );
    answersBeforeEnd(transport, socket, end);
    const opened = serving.opened;
    const recorded = coldScopeOf(scope);
    if (opened !== undefined && recorded !== undefined) {
      recordOpening(socket, transport, (opening) => opened(recorded, opening));
    }
    socket.resume();
  } catch (error) {
    log(`mcpool: MCP socket ${labelOf(scope)}: ${(error as Error).message}`);
    end();
  }
}

/**
 * Each scope's bridge, made by the first connection to it over the one client the MCP
 * sockets share (loaded then too); `loaded()` is that load, once begun. `unload()` closes
 * that client and forgets it with every bridge: what a session sends after it (a task's
 * release as it ends) fails at once, to no daemon; the next connection loads afresh.
 */
function scopeBridges(
  options: McpSocketsOptions,
  log: (line: string) => void,
): {
  bridges: Map<string, Promise<Bridge>>;
  bridgeFor(scope: string): Promise<{ bridge: Bridge; loaded: Loaded }>;
  loaded(): Promise<Loaded> | undefined;
  unload(): Promise<void>;
} {
  const bridges = new Map<string, Promise<Bridge>>();
  let loaded: Promise<Loaded> | undefined;
  const bridgeFor = async (scope: string): Promise<{ bridge: Bridge; loaded: Loaded }> => {
    loaded ??= load(options.daemonSocketPath);
    const ready = await loaded;
    let bridge = bridges.get(scope);
    if (bridge === undefined) {
      bridge = ready.createBridge({
        client: ready.client,
        ...scopeOptions(scope),
        name: "mcpool",
        version: options.version,
        log,
      });
      bridges.set(scope, bridge);
      // A scope that failed (its server just went) is tried afresh by the next connection.
      bridge.catch(() => bridges.delete(scope));
    }
    return { bridge: await bridge, loaded: ready };
  };
  const unload = async (): Promise<void> => {
    const was = loaded;
    const made = [...bridges.values()];
    loaded = undefined;
    bridges.clear();
    const ready = await was?.catch(() => undefined);
    // Closed before any session ends: the client sends nothing from here on.
    await ready?.client.close().catch(() => undefined);
    await Promise.allSettled(made.map((bridge) => bridge.then((b) => b.close())));
  };
  return { bridges, bridgeFor, loaded: () => loaded, unload };
}

export async function startMcpSockets(options: McpSocketsOptions): Promise<McpSockets> {
  const log = options.log ?? (() => undefined);
  const dir = mcpSocketDir(options.daemonSocketPath);
  await privateDir(dir);
  // A previous daemon's sockets, but those it handed over: we hold its lock, they are nobody's.
  const pathOf = (scope: string): string | undefined => scopePath(options.daemonSocketPath, scope);
  const bound = await Listeners.clearing(dir, options.inherited, pathOf);

  const listeners = new Map<string, NetServer>();
  const paths = new Map<string, string>();
  const { bridges, bridgeFor, loaded, unload } = scopeBridges(options, log);
  const sockets = new Set<Socket>();
  let closed = false;
  const handing = new HandingOver({
    listeners,
    paths,
    sockets,
    unload,
    settled: () => passes.settled(),
    sync: () => sync(),
  });

  const { connections: cap, opened } = options;
  const serving: Serving = { cap, sockets, bridgeFor, log, opened, hostNames: new HostNames() };

  const listen = async (scope: string): Promise<void> => {
    const path = pathOf(scope);
    if (path === undefined) {
      log(`mcpool: no MCP socket for "${labelOf(scope)}" (its name or path does not fit a socket)`);
      return;
    }
    // Half-open: a host's EOF is not the end of the answers it is owed.
    const listener = createServer({ allowHalfOpen: true }, (socket) =>
      handing.holding ? socket.destroy() : void serveConnection(scope, socket, serving),
    );
    listeners.set(scope, listener);
    await bound.listen(listener, scope, path);
    paths.set(scope, path);
  };

  const forget = async (scope: string): Promise<void> => {
    const listener = listeners.get(scope);
    listeners.delete(scope);
    paths.delete(scope);
    // The socket file goes with the listener; open sessions end on their own.
    await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
    await bound.closed(listener, scope);
    const bridge = bridges.get(scope);
    bridges.delete(scope);
    await bridge?.then((b) => b.close()).catch(() => undefined);
  };

  const scopes = new ScopeListeners({
    dir,
    listeners,
    paths,
    listen,
    forget,
    wanted: () =>
      new Set([
        POOL_SCOPE,
        ...Object.keys(CATALOG_SCOPES),
        ...options.serverIds().slice(0, MAX_SERVER_SOCKETS),
      ]),
    again: () => void sync().catch(() => undefined),
    failed: (scope, error) =>
      log(`mcpool: cannot listen for MCP on "${labelOf(scope)}": ${error.message}`),
  });
  /**
   * Sockets in step with the pool's servers: one per id (the first MAX_SERVER_SOCKETS), plus
   * the pool's. A burst of pool events is one pass (passes.ts).
   */
  const passes = passesInTurn(async () => {
    if (closed || handing.holding) return;
    // A folder removed under this pass is no failure but a pass to do again (see `again`).
    await inFolders(options.daemonSocketPath, dir, (folders) => scopes.pass(folders));
  });
  const sync = passes.run;

  const unsubscribe = options.onChange(() => {
    sync().catch((error: unknown) => {
      log(`mcpool: the MCP sockets could not follow the pool: ${(error as Error).message}`);
    });
  });
  await sync();
  // Handed over for a scope this daemon serves no more: closed, and its path with it.
  await bound.closeUntaken();

  let closing: Promise<void> | undefined;
  /** Ends every session, then `listeners` (closed, or left), then the shared client. */
  const end = async (listenersGo: () => Promise<void>): Promise<void> => {
    closed = true;
    unsubscribe();
    await passes.settled();
    for (const socket of sockets) socket.destroy();
    await listenersGo();
    const ready = await loaded()?.catch(() => undefined);
    await ready?.client.close().catch(() => undefined);
  };
  return {
    paths,
    get sessions() {
      return sockets.size;
    },
    renew() {
      scopes.relisten = true;
      return sync();
    },
    hold: () => handing.hold(),
    letGo: () => handing.letGo(),
    resume: () => handing.resume(),
    abandon() {
      return (closing ??= end(async () => {
        for (const listener of listeners.values()) listener.close();
        await Promise.allSettled([...bridges.values()].map((made) => made.then((b) => b.close())));
      }));
    },
    close() {
      return (closing ??= end(async () => {
        await Promise.all([...listeners.keys()].map((scope) => forget(scope)));
      }).then(() => rm(dir, { recursive: true, force: true }).catch(() => undefined)));
    },
  };
}
