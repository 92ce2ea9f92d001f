/**
 * The daemon's one connection cap (issue 27 item 8, SPEC F14): connections to its socket and
 * sessions on its MCP sockets count against one `mcpool.maxConnections`, so a process that
 * opens connections until the fd limit meets a clean refusal (a JSON-RPC error saying so)
 * long before accept() meets EMFILE. The cap never passes half the process's open-file
 * limit: the other half is the children's pipes, the MCP sockets' listeners, the log, the
 * stores and the config watcher. A few slots past the cap are kept for the CLI's control
 * commands and the MCP sockets' own client, so a flood can always be looked at and stopped.
 */
import { readFileSync } from "node:fs";

/** Connections when `mcpool.maxConnections` is not set: far more agents than a user runs. */
export const DEFAULT_MAX_CONNECTIONS = 1_000;

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

export class ConnectionCap {
  #configured = DEFAULT_MAX_CONNECTIONS;
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

  /** `mcpool.maxConnections` from the config; undefined: the default. Open ones stay. */
  configure(max: number | undefined): void {
    this.#configured = max !== undefined && max >= 1 ? max : DEFAULT_MAX_CONNECTIONS;
  }

  get max(): number {
    return Math.min(this.#configured, this.#fdBound);
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
    this.#log(`${this.message()} (refusing new connections until some close)`);
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
    if (this.#fdBound < this.#configured) {
      return `mcpool: too many connections (${open} of ${max}, half the daemon's open-file limit of ${this.#fdLimit}); close some or raise the limit (\`ulimit -n\`, or LimitNOFILE= in the service unit)`;
    }
    return `mcpool: too many connections (${open} of ${max}); close some or raise mcpool.maxConnections in mcp.json`;
  }

  state(): ConnectionCapState {
    return { open: this.#open, max: this.max, refused: this.#refused };
  }
}
