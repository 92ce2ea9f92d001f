/**
 * The daemon's one connection cap: connections to its socket and
 * sessions on its MCP sockets count against one `mcpool.maxConnections`, so a process that
 * opens connections until the fd limit meets a clean refusal (a JSON-RPC error saying so)
 * long before accept() meets EMFILE. The cap never passes half the process's open-file
 * limit: the other half is the children's pipes, the MCP sockets' listeners, the log, the
 * stores and the config watcher. A few slots past the cap are kept for the CLI's control
 * commands and the MCP sockets' own client, so a flood can always be looked at and stopped.
 *
 * No one process may hold more than its share of the cap (`mcpool.maxConnectionsPerProcess`,
 * a quarter of the cap by default), so a process that hoards connections leaves room for the
 * CLI and every other agent. The process is the one the kernel says holds the other end
 * (peer-process.ts), never the pid a hello claims; it is looked up only once more connections
 * are open than one process may hold, one lookup for every connection waiting on it.
 */
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { peerProcesses, type PeerLookup, type PeerProcess } from "./peer-process.js";

/** Connections when `mcpool.maxConnections` is not set: far more agents than a user runs. */
export const DEFAULT_MAX_CONNECTIONS = 1_000;

/** A process's share of the cap when `mcpool.maxConnectionsPerProcess` is not set: a quarter. */
export const DEFAULT_SHARE_DIVISOR = 4;

/** Slots past the cap for RESERVED_CLIENTS: a few `mcpool status` at once during a flood. */
export const RESERVED_SLOTS = 8;

/**
 * Bound on a reserved slot's hello, ms: the CLI says hello at once, and a connection that
 * says nothing must not keep a slot meant for `mcpool status` for the full hello timeout.
 * At once is not within 1 s on two cores under load: a `status` started then was dropped
 * before its hello and told the socket was gone.
 */
export const RESERVED_HELLO_TIMEOUT_MS = 3_000;

/**
 * The clients (hello's `clientName`) a full daemon still lets in on a reserved slot: the
 * commands that show and stop a flood, and the MCP sockets' one shared client, without which
 * no MCP session could reach the pool.
 */
export const RESERVED_CLIENTS: ReadonlySet<string> = new Set([
  "mcpool-cli/status",
  "mcpool-cli/shutdown",
  "mcpool-cli/reload",
  "mcpool-cli/stop",
  "mcpool-mcp-socket",
]);

/** How a new connection enters: counted, counted on a reserved slot, or refused. */
export type Entry = "open" | "reserved" | "refused";

export interface ConnectionCapState {
  /** Connections counted now: the socket's and the MCP sockets' together. */
  open: number;
  /** The cap in force: `mcpool.maxConnections`, or half the open-file limit when lower. */
  max: number;
  /** Connections refused since the daemon started. */
  refused: number;
  /** The most one process may hold. */
  perProcess: number;
}

/** The process's soft open-file limit, where /proc tells it (Linux); undefined elsewhere. */
export function openFileLimit(): number | undefined {
  try {
    const limits = readFileSync("/proc/self/limits", "utf8");
    const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
    return soft === undefined ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/** A connection counted in a process's share: its order of arrival, and its process once known. */
interface Tracked {
  seq: number;
  owner?: PeerProcess;
}

export class ConnectionCap {
  #configured = DEFAULT_MAX_CONNECTIONS;
  #perProcess: number | undefined;
  /** Every counted connection (both fronts), for the per-process share. */
  readonly #tracked = new Map<Socket, Tracked>();
  #seq = 0;
  /** A lookup not yet started: every connection arriving before it starts rides it. */
  #nextLookup: Promise<PeerLookup> | undefined;
  /** The lookup running now; the next starts after it. */
  #lookup: Promise<unknown> = Promise.resolve();
  /** Why processes cannot be told apart here, once logged. */
  #blind: string | undefined;
  readonly #fdBound: number;
  readonly #fdLimit: number | undefined;
  #open = 0;
  #refused = 0;
  /** Refusing since the last time a connection fit: the log says so once per burst. */
  #full = false;
  readonly #log: (line: string) => void;

  constructor(log: (line: string) => void, fdLimit = openFileLimit()) {
    this.#log = log;
    this.#fdLimit = fdLimit;
    this.#fdBound =
      fdLimit === undefined ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor(fdLimit / 2));
  }

  /**
   * `mcpool.maxConnections` and `mcpool.maxConnectionsPerProcess` from the config; undefined:
   * the default. Open ones stay.
   */
  configure(max: number | undefined, perProcess?: number): void {
    this.#configured = max !== undefined && max >= 1 ? max : DEFAULT_MAX_CONNECTIONS;
    this.#perProcess = perProcess !== undefined && perProcess >= 1 ? perProcess : undefined;
  }

  get max(): number {
    return Math.min(this.#configured, this.#fdBound);
  }

  /** The most connections one process may hold. */
  get perProcess(): number {
    const max = this.max;
    return Math.min(max, this.#perProcess ?? Math.max(1, Math.ceil(max / DEFAULT_SHARE_DIVISOR)));
  }

  /**
   * A connection enter() let in, checked against its process's share: the refusal's message
   * when its process already holds its share, else undefined (and it counts until it
   * closes). Its process is looked up only when more are open than one process may hold.
   */
  async share(socket: Socket): Promise<string | undefined> {
    const tracked: Tracked = { seq: ++this.#seq };
    this.#tracked.set(socket, tracked);
    socket.once("close", () => this.#tracked.delete(socket));
    if (this.#tracked.size <= this.perProcess) return undefined;
    await this.learnOwners();
    const owner = tracked.owner;
    if (owner === undefined || !this.#tracked.has(socket)) return undefined;
    let held = 0;
    for (const entry of this.#tracked.values()) {
      if (entry.seq < tracked.seq && entry.owner?.pid === owner.pid) held++;
    }
    if (held < this.perProcess) return undefined;
    this.#tracked.delete(socket);
    this.#refused++;
    return `too many connections from process ${owner.pid} (${owner.command || "command unknown"}): it holds ${held}, its share of the ${this.max} allowed; close some, or raise mcpool.maxConnectionsPerProcess in mcp.json`;
  }

  /**
   * Learns the process of each counted connection not known yet: one lookup for every
   * caller waiting now. A refusal of the full cap waits for it, so it can name the holder.
   */
  async learnOwners(): Promise<void> {
    const unknown = [...this.#tracked.values()].some((entry) => entry.owner === undefined);
    if (!unknown) return;
    const { owners, why } = await this.#lookupOwners().catch((error: unknown): PeerLookup => ({
      owners: new Map(),
      why: (error as Error).message,
    }));
    if (why !== undefined && this.#blind === undefined) {
      this.#blind = why;
      this.#log(
        `mcpool: cannot tell which process holds a connection (${why}): no per-process share`,
      );
    }
    for (const [socket, entry] of this.#tracked) {
      const found = owners.get(socket);
      if (entry.owner === undefined && found !== undefined) entry.owner = found;
    }
  }

  /** One lookup for every connection waiting now, started once the one running is done. */
  #lookupOwners(): Promise<PeerLookup> {
    if (this.#nextLookup !== undefined) return this.#nextLookup;
    const next = this.#lookup.then(() => {
      this.#nextLookup = undefined;
      return peerProcesses([...this.#tracked.keys()].filter((s) => !this.#known(s)));
    });
    this.#nextLookup = next;
    this.#lookup = next.catch(() => undefined);
    return next;
  }

  #known(socket: Socket): boolean {
    return this.#tracked.get(socket)?.owner !== undefined;
  }

  /** The process holding the most counted connections, where known: the refusal names it. */
  #topHolder(): { owner: PeerProcess; held: number } | undefined {
    const counts = new Map<number, { owner: PeerProcess; held: number }>();
    for (const { owner } of this.#tracked.values()) {
      if (owner === undefined) continue;
      const entry = counts.get(owner.pid) ?? { owner, held: 0 };
      entry.held++;
      counts.set(owner.pid, entry);
    }
    let top: { owner: PeerProcess; held: number } | undefined;
    for (const entry of counts.values()) if (entry.held > (top?.held ?? 0)) top = entry;
    return top;
  }

  /**
   * A new connection. `reserve`: it may take a reserved slot (the daemon's socket, where the
   * hello then says whether it is a RESERVED_CLIENTS one); the MCP sockets have none.
   */
  enter(reserve: boolean): Entry {
    const max = this.max;
    if (this.#open < max) {
      this.#open++;
      return "open";
    }
    if (reserve && this.#open < max + RESERVED_SLOTS) {
      this.#open++;
      return "reserved";
    }
    this.refuse();
    return "refused";
  }

  /** A connection on a reserved slot turned out not to be a reserved client. */
  refuse(): void {
    this.#refused++;
    if (this.#full) return;
    this.#full = true;
    this.#log(`mcpool: ${this.message()} (refusing new connections until some close)`);
  }

  /** A counted connection closed. */
  leave(): void {
    this.#open = Math.max(0, this.#open - 1);
    if (this.#open < this.max) this.#full = false;
  }

  /** What a refused connection is told: what, why, and what to do. */
  message(): string {
    const max = this.max;
    const open = Math.min(this.#open, max);
    const top = this.#topHolder();
    const most =
      top === undefined
        ? ""
        : `, ${top.held} of them held by process ${top.owner.pid} (${top.owner.command || "command unknown"})`;
    if (this.#fdBound < this.#configured) {
      return `too many connections (${open} of ${max}, half the daemon's open-file limit of ${this.#fdLimit}${most}); close some or raise the limit (\`ulimit -n\`, or LimitNOFILE= in the service unit)`;
    }
    return `too many connections (${open} of ${max}${most}); close some or raise mcpool.maxConnections in mcp.json`;
  }

  state(): ConnectionCapState {
    return { open: this.#open, max: this.max, refused: this.#refused, perProcess: this.perProcess };
  }
}
