/**
 * The daemon: one per user. It owns the pool, serves it on a Unix socket, watches
 * `mcp.json`, records its children so a successor can reap them, and stops everything it
 * started on the way out. It keeps its socket: re-created when removed, with its folder
 * (socket/keeper.ts), and recorded with its pid in the data folder (daemon-records.ts) so a
 * daemon whose socket is gone is still found. `createDaemon()` does nothing until `start()`.
 */
import type { ConfigStatus, DaemonStatus, HandoverInfo, HandoverResult } from "mcpool-protocol";
import type { McpPool, McpPoolOptions } from "../pool/pool.js";
import { VERSION } from "../version.js";
import { ConfigSource, createReadLog } from "./config/source.js";
import { acquireInstanceLock, type InstanceLock } from "./process/instance-lock.js";
import { liveDaemons, writeDaemonRecord } from "./process/daemon-records.js";
import { HAS_ABSTRACT_SOCKETS, lockName } from "./process/name-lock.js";
import { readEnvFile } from "./process/env-file.js";
import { createLog, type DaemonLog } from "./process/logger.js";
import {
  checkSocketPath,
  prepareDir,
  prepareRuntimeDir,
  resolvePaths,
  type DaemonPaths,
} from "./process/paths.js";
import { createPidRecords } from "./process/pid-records.js";
import { endMarked, newMark } from "./process/marked.js";
import { SaveHealth } from "./process/save-health.js";
import { createHandlers } from "./handlers/rpc.js";
import { createSocketServer, type SocketServer } from "./socket/server.js";
import { ConnectionCap } from "./socket/connection-cap.js";
import { socketAnswers } from "./socket/probe.js";
import { keepSocket, type SocketKeeper } from "./socket/keeper.js";
import type { PoolMonitor } from "../pool/watch/monitor.js";
import { watchConfig, type ConfigWatcher } from "./config/watcher.js";
import type { Predecessor } from "./handover/predecessor.js";
import { expectSubscriptions } from "./handover/subscriptions.js";
import { expectTasks } from "./handover/moved-tasks.js";
import { handOver, type HandOverDeps } from "./handover/hand-over.js";
import { concludeAdoption } from "./handover/adoption.js";
import { configureCap, daemonPool } from "./daemon-pool.js";

export interface DaemonOptions {
  socketPath?: string;
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  /** An inherited listening socket (systemd socket activation). */
  listenFd?: number;
  /** Where the daemon logs. Default: stderr and a rotated file in the log directory. */
  log?: DaemonLog;
  /** Overrides of the pool's options, after the file's `"mcpool"` section. */
  pool?: Partial<McpPoolOptions>;
  /** Called when a client asks the daemon to shut down. */
  onShutdownRequested?: () => void;
  /**
   * Read the env file (`paths.envFilePath`) into `process.env` once the daemon holds its
   * lock, before it reads the config: what `${VAR}` placeholders and children see. The
   * CLI's `serve` sets it. Default false: a daemon inside another program leaves that
   * program's environment alone.
   */
  envFile?: boolean;
  /**
   * The caller routes SIGUSR1 to `renew()` (the CLI's `serve` does), and SIGTERM to `stop()`:
   * said in the daemon's record, so `serve` and `shutdown` may send them. Default false.
   */
  handlesSignals?: boolean;
  /** Started by a hand-over (`serve --handover`): the old daemon's snapshot and fds. */
  predecessor?: Predecessor;
  /** How `daemon/handover` starts the new daemon (the CLI's `serve`); absent: refused. */
  successor?: HandOverDeps["successor"];
  /** The fronts beside the daemon: closed while it hands over, restarted if that fails. */
  onHandingOver?: HandOverDeps["fronts"];
}

export type StartResult =
  | { started: true }
  | { started: false; holderPid: number | undefined }
  /** A hand-over that did not go through: the old daemon serves on. */
  | { started: false; handedBack: string };

export interface Daemon {
  start(): Promise<StartResult>;
  /** Stops accepting, lets calls finish, stops every child, removes the socket. Idempotent. */
  stop(): Promise<void>;
  /** Re-reads the config file and reconciles now. */
  reload(): Promise<ConfigStatus>;
  /**
   * Re-creates the socket's folder and binds the socket again (on SIGUSR1). False when
   * it could not (logged), or the socket is an inherited one.
   */
  renew(reason: string): Promise<boolean>;
  /** Calls `listener` after each renewal of the socket (the fronts beside it follow). */
  onRenewed(listener: () => void): void;
  status(): DaemonStatus;
  /**
   * Hands the socket and the running children to a new daemon (handover/README.md), keeping
   * connection `keepId` open for the answer; once answered, the shutdown is requested.
   */
  handOver(keepId: number): Promise<HandoverResult>;
  /** Resolves once every reconcile queued so far has finished. */
  settled(): Promise<void>;
  /**
   * Why the daemon stopped as it could not serve (a failed hand-over after which its socket
   * could not be listened on again): its exit is then a failure. Undefined otherwise.
   */
  readonly failure: string | undefined;
  readonly paths: DaemonPaths;
  readonly pool: McpPool;
  /**
   * The connection cap (`mcpool.maxConnections`), shared with the fronts the composition
   * root starts beside the daemon (the MCP sockets): one count for every connection.
   */
  readonly connections: ConnectionCap;
}

export async function createDaemon(options: DaemonOptions = {}): Promise<Daemon> {
  return new PoolDaemon(options);
}

/** The daemon's parts, built by start() and ended by stop(). */
class PoolDaemon implements Daemon {
  readonly paths: DaemonPaths;
  readonly connections: ConnectionCap;
  readonly #options: DaemonOptions;
  readonly #startedAt = Date.now();
  readonly #config: ConfigSource;
  #log: DaemonLog | undefined;
  #pool: McpPool | undefined;
  #monitor: PoolMonitor | undefined;
  #server: SocketServer | undefined;
  #watcher: ConfigWatcher | undefined;
  #releaseLock: (() => void) | undefined;
  #takeLock: (() => Promise<boolean>) | undefined;
  #keeper: SocketKeeper | undefined;
  #removeRecord: (() => void) | undefined;
  readonly #renewed = new Set<() => void>();
  #stopping: Promise<void> | undefined;
  // Every child's, and its descendants', so those that leave their group are found.
  readonly #mark = newMark();
  // The stores' failed saves, for status.
  readonly #saves = new SaveHealth();
  // The socket a hand-over brought is served as an inherited one.
  readonly #listenFd: number | undefined;
  // The marks of the daemons this one took children from: their descendants are ours too,
  // once the hand-over concluded. Until then they are the old daemon's, which serves on if
  // this one gives up: a stop before then ends only what carries this daemon's own mark.
  #marks: string[];
  #handover: HandoverInfo | undefined;
  /** Set once a new daemon took over: the stop leaves the socket and the children alone. */
  #handedOver = false;
  #failure: string | undefined;

  constructor(options: DaemonOptions) {
    this.#options = options;
    this.paths = resolvePaths({
      ...(options.socketPath ? { socket: options.socketPath } : {}),
      ...(options.configPath ? { config: options.configPath } : {}),
      env: options.env ?? process.env,
    });
    this.#config = new ConfigSource(this.paths.configPath);
    this.#log = options.log;
    this.connections = new ConnectionCap((line) => this.#log?.error(line));
    this.#listenFd = options.listenFd ?? options.predecessor?.listenFd;
    this.#marks = [this.#mark];
  }

  get pool(): McpPool {
    if (!this.#pool) throw new Error("the daemon has not started");
    return this.#pool;
  }

  status(): DaemonStatus {
    const { paths } = this;
    return {
      pid: process.pid,
      version: VERSION,
      startedAt: this.#startedAt,
      socketPath: paths.socketPath,
      configPath: paths.configPath,
      config: this.#configStatus(),
      servers: this.#pool?.state() ?? [],
      clients: this.#server?.clients ?? 0,
      connections: this.connections.state(),
      saveProblems: this.#saves.state(),
      ...(this.#handover ? { handover: this.#handover } : {}),
      ...(this.#log === undefined ? {} : { log: logState(this.#log) }),
    };
  }

  // The file's status and whether its watcher is watching.
  #configStatus(): ConfigStatus {
    return { ...this.#config.status(), ...(this.#watcher?.state() ?? {}) };
  }

  // A reload starts the watch again from what exists now: a watcher that lost its folder,
  // or failed, watches again.
  async reload(): Promise<ConfigStatus> {
    await this.#watcher?.rearm();
    await this.pool.sync();
    return this.#configStatus();
  }

  settled(): Promise<void> {
    return this.pool.flush();
  }

  renew(reason: string): Promise<boolean> {
    return this.#keeper?.renew(reason) ?? Promise.resolve(false);
  }

  onRenewed(listener: () => void): void {
    this.#renewed.add(listener);
  }

  async handOver(keepId: number): Promise<HandoverResult> {
    const options = this.#options;
    const lock = {
      release: () => this.#releaseLock?.(),
      take: () => this.#takeLock?.() ?? Promise.resolve(false),
    };
    const from = {
      pid: process.pid,
      version: VERSION,
      startedAt: this.#startedAt,
      servingSince: this.#handover?.servingSince ?? this.#startedAt,
      handovers: this.#handover?.handovers ?? 0,
    };
    const inherited = options.listenFd !== undefined || options.predecessor?.snapshot?.inherited;
    const fronts = options.onHandingOver;
    const [server, pool, log] = [this.#server, this.#pool, this.#log];
    const serving = server && pool && log && !this.#stopping ? { server, pool, log } : undefined;
    const marks = this.#marks;
    // Nothing listens after a failed hand-over: stop as a daemon stops, not serve no one.
    const stop = (why: string): void => {
      this.#failure = why;
      setImmediate(() => options.onShutdownRequested?.());
    };
    const deps = { ...serving, lock, fronts, stop, successor: options.successor, from, marks };
    const result = await handOver({ ...deps, inherited: inherited === true }, keepId);
    this.#handedOver = true;
    // After this answer is written, as `daemon/shutdown` does.
    setImmediate(() => options.onShutdownRequested?.());
    return result;
  }

  get failure(): string | undefined {
    return this.#failure;
  }

  async start(): Promise<StartResult> {
    const { paths } = this;
    const options = this.#options;
    if (this.#listenFd === undefined) checkSocketPath(paths.socketPath);
    const runtime = prepareRuntimeDir(paths.socketDir);
    prepareDir(paths.dataDir, 0o700);
    prepareDir(paths.logDir, 0o700);
    this.#log ??= createLog(paths.logDir);
    const log = this.#log;
    if (runtime.tightened) log.info(`mcpool: tightened ${paths.socketDir} to 0700`);

    const lock = await this.#lock(log);
    if (!lock.acquired) return { started: false, holderPid: lock.holderPid };
    // Records of daemons that died without removing theirs.
    liveDaemons(paths.dataDir, { sweep: true });

    if (options.envFile === true) applyEnvFile(paths.envFilePath, log);

    const records = createPidRecords(paths.dataDir, { log, mark: this.#mark, health: this.#saves });
    const { reaped } = await records.reapPredecessors({ log });
    if (reaped.length > 0)
      log.info(
        `mcpool: reaped ${reaped.length} children of a previous daemon: ${reaped.join(", ")}`,
      );

    const logRead = createReadLog(paths.configPath, log);
    const first = await this.#config.read();
    logRead(first.status);
    configureCap(this.connections, first.pool);
    const { pool, monitor } = daemonPool({
      paths,
      log,
      config: this.#config,
      first,
      logRead,
      connections: this.connections,
      records,
      mark: this.#mark,
      saves: this.#saves,
      predecessor: options.predecessor,
      overrides: options.pool,
    });
    this.#pool = pool;
    this.#monitor = monitor;

    // The old daemon's subscriptions are expected before the first reconcile dials a handed
    // child: an update read from its pipe from then on is kept for the hosts coming back.
    expectSubscriptions(pool, options.predecessor?.snapshot?.subscriptions, log);
    expectTasks(pool, options.predecessor?.snapshot?.tasks, log);
    // The first reconcile starts before the socket opens, so a request that arrives at
    // once finds every row registered; it runs in the background, because a wedged server
    // must not keep the socket from answering. Early listings and calls wait for it.
    pool
      .sync(first.rows)
      .catch((error: unknown) => log.error(`mcpool: ${(error as Error).message}`));

    await this.#serve(pool, monitor, lock.restore, log);
    await this.#watch(log);
    this.#record(log);
    if (options.predecessor) {
      const concluded = await concludeAdoption(pool, options.predecessor, log);
      if (!concluded.serve) {
        await this.stop();
        return { started: false, handedBack: concluded.why };
      }
      this.#handover = concluded.info;
      this.#marks = [this.#mark, ...(options.predecessor.snapshot?.marks ?? [])];
    }
    log.info(
      `mcpool: serving ${paths.socketPath} (pid ${process.pid}, config ${paths.configPath})`,
    );
    return { started: true };
  }

  /**
   * Takes the instance lock, and keeps how to take it again (a hand-over that comes back).
   * A holder the lock cannot see may still serve its socket. Not with an inherited listener:
   * that is our own, and a probe of its path would find it live. The abstract name outlives
   * any removal of the folder: one daemon per socket path.
   */
  async #lock(log: DaemonLog): Promise<InstanceLock> {
    const { socketPath, lockPath } = this.paths;
    const acquire = (): Promise<InstanceLock> =>
      acquireInstanceLock(lockPath, {
        ...(this.#listenFd === undefined ? { isDaemonAlive: () => socketAnswers(socketPath) } : {}),
        ...(HAS_ABSTRACT_SOCKETS ? { name: lockName(socketPath) } : {}),
        onNameSquatted: (name) =>
          log.error(
            `mcpool: the lock name @${name} is held by a process that is not ours; only the lock file ${lockPath} keeps a second daemon away`,
          ),
      });
    const lock = await acquire();
    if (!lock.acquired) return lock;
    this.#releaseLock = lock.release;
    this.#takeLock = async () => {
      const again = await acquire();
      if (again.acquired) this.#releaseLock = again.release;
      return again.acquired;
    };
    return lock;
  }

  /** Opens the socket, and keeps it while it is a path of our own. */
  async #serve(
    pool: McpPool,
    monitor: PoolMonitor,
    restoreLock: () => Promise<void>,
    log: DaemonLog,
  ): Promise<void> {
    const options = this.#options;
    const listenFd = this.#listenFd;
    // A socket a hand-over brought from a daemon that bound it is this daemon's path too.
    const ownPath = options.predecessor?.snapshot?.inherited === false;
    const server = createSocketServer({
      ...(listenFd !== undefined ? { listenFd } : { socketPath: this.paths.socketPath }),
      ...(listenFd !== undefined && ownPath ? { ownPath: this.paths.socketPath } : {}),
      handlers: createHandlers({
        pool,
        monitor,
        status: () => this.status(),
        reload: () => this.reload(),
        shutdown: () => options.onShutdownRequested?.(),
        handover: (keepId) => this.handOver(keepId),
        version: VERSION,
      }),
      cap: this.connections,
      log,
    });
    this.#server = server;
    try {
      await server.start();
    } catch (error) {
      // The children the first reconcile started must not outlive a daemon that never served.
      await pool.close().catch(() => undefined);
      await monitor.close().catch(() => undefined);
      this.#releaseLock?.();
      throw error;
    }
    // The service manager's socket is its to keep (`systemctl --user restart mcpool.socket`
    // re-creates it); one a hand-over brought from a daemon that bound it is ours.
    if (listenFd === undefined || ownPath) {
      this.#keeper = keepSocket({
        socketPath: this.paths.socketPath,
        server,
        restoreLock,
        onRenewed: () => {
          for (const listener of this.#renewed) listener();
        },
        log,
      });
    }
  }

  /** Watches the config file: a change, or a failed watch, reconciles soon. */
  async #watch(log: DaemonLog): Promise<void> {
    const { configPath } = this.paths;
    this.#watcher = watchConfig(
      configPath,
      () => {
        this.#pool?.syncSoon().catch(() => undefined);
      },
      // Logged, and the path read again so status says what is there now.
      (error) => {
        log.error(`mcpool: watching ${configPath}: ${error.message}`);
        this.#pool?.syncSoon().catch(() => undefined);
      },
    );
    await this.#watcher.ready;
  }

  /** Records this daemon in the data folder, so it is found if its socket goes. */
  #record(log: DaemonLog): void {
    const { dataDir, socketPath } = this.paths;
    try {
      this.#removeRecord = writeDaemonRecord(dataDir, {
        socket: socketPath,
        version: VERSION,
        startedAt: this.#startedAt,
        handlesSignals: this.#options.handlesSignals === true,
      });
    } catch (error) {
      log.error(
        `mcpool: could not record this daemon in ${dataDir}: ${(error as Error).message}; \`mcpool status\` cannot find it if its socket goes`,
      );
    }
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      // No longer serving: nothing should signal or look for us from here on.
      this.#removeRecord?.();
      this.#keeper?.close();
      await this.#watcher?.close().catch(() => undefined);
      // Handed over: the socket is the new daemon's, its path with it.
      if (this.#handedOver) await this.#server?.abandon().catch(() => undefined);
      else await this.#server?.close().catch(() => undefined);
      await this.#pool?.close().catch(() => undefined);
      await this.#monitor?.close().catch(() => undefined);
      // What left its server's process group (setsid) outlived the stop ladder: end it too.
      // Handed over: what carries the mark is the new daemon's now.
      if (this.#pool !== undefined && !this.#handedOver) {
        const log = this.#log;
        for (const each of this.#marks)
          await endMarked(each, log ? { log } : {}).catch(() => undefined);
      }
      this.#releaseLock?.();
      this.#log?.info("mcpool: stopped");
    })();
    return this.#stopping;
  }
}

/** The log file for status: its path, and why it is not written when it is not. */
function logState({ path, problem }: DaemonLog): { path: string; problem?: string } {
  return problem === undefined ? { path } : { path, problem };
}

/** The env file into process.env (values win), logged by name only: values may be secrets. */
function applyEnvFile(path: string, log: DaemonLog): void {
  const file = readEnvFile(path);
  if (file === undefined) return;
  for (const problem of file.problems) log.error(`mcpool: env file ${path}: ${problem}`);
  const names = Object.keys(file.vars);
  Object.assign(process.env, file.vars);
  if (file.readable)
    log.info(
      `mcpool: read ${names.length} variables from ${path}${names.length > 0 ? `: ${names.join(", ")}` : ""}`,
    );
}
