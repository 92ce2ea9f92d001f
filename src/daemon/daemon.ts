/**
 * The daemon: one per user. It owns the pool, serves it on a Unix socket, watches
 * `mcp.json`, records its children so a successor can reap them, and stops everything it
 * started on the way out. It keeps its socket: re-created when removed, with its folder
 * (socket/keeper.ts), and recorded with its pid in the data folder (daemon-records.ts) so a
 * daemon whose socket is gone is still found. `createDaemon()` does nothing until `start()`.
 */
import { basename } from "node:path";
import { ErrorCode, McpError } from "../pool/mcp/error.js";
import type { ConfigStatus, DaemonStatus, HandoverInfo, HandoverResult } from "mcpool-protocol";
import { sectionValues } from "../config/pool-section.js";
import { McpPool, type McpPoolOptions } from "../pool/pool.js";
import { VERSION } from "../version.js";
import { ConfigSource, createReadLog } from "./config/source.js";
import { acquireInstanceLock } from "./process/instance-lock.js";
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
import { endMarked, MARK_VARIABLE, newMark } from "./process/marked.js";
import { SaveHealth } from "./process/save-health.js";
import { createFilePinStore } from "./stores/pins.js";
import { createHandlers } from "./handlers/rpc.js";
import { createSocketServer, type SocketServer } from "./socket/server.js";
import { ConnectionCap } from "./socket/connection-cap.js";
import { socketAnswers } from "./socket/probe.js";
import { keepSocket, type SocketKeeper } from "./socket/keeper.js";
import { createFileToolsCache } from "./stores/tools-cache.js";
import { createFileTokenStore } from "./stores/tokens.js";
import { createFileUsageStore } from "./stores/usage.js";
import { PoolMonitor } from "../pool/watch/monitor.js";
import { watchConfig, type ConfigWatcher } from "./config/watcher.js";
import type { Predecessor } from "./handover/predecessor.js";
import { handOver, type HandOverDeps } from "./handover/hand-over.js";
import { concludeAdoption } from "./handover/adoption.js";

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
   * Re-creates the socket's folder and binds the socket again (SIGUSR1, or the keeper finding it gone). False when
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
  readonly paths: DaemonPaths;
  readonly pool: McpPool;
  /**
   * The connection cap (`mcpool.maxConnections`), shared with the fronts the composition
   * root starts beside the daemon (the MCP sockets): one count for every connection.
   */
  readonly connections: ConnectionCap;
}

export async function createDaemon(options: DaemonOptions = {}): Promise<Daemon> {
  const env = options.env ?? process.env;
  const paths = resolvePaths({
    ...(options.socketPath ? { socket: options.socketPath } : {}),
    ...(options.configPath ? { config: options.configPath } : {}),
    env,
  });
  const startedAt = Date.now();
  const config = new ConfigSource(paths.configPath);
  let log: DaemonLog | undefined = options.log;
  let pool: McpPool | undefined;
  let monitor: PoolMonitor | undefined;
  let server: SocketServer | undefined;
  let watcher: ConfigWatcher | undefined;
  let releaseLock: (() => void) | undefined;
  let keeper: SocketKeeper | undefined;
  let removeRecord: (() => void) | undefined;
  const renewed = new Set<() => void>();
  let stopping: Promise<void> | undefined;
  const connections = new ConnectionCap((line) => log?.error(line));
  // Every child's, and its descendants', so those that leave their group are found.
  const mark = newMark();
  // The stores' failed saves, for status.
  const saves = new SaveHealth();
  // The socket a hand-over brought is served as an inherited one.
  const listenFd = options.listenFd ?? options.predecessor?.listenFd;
  // The marks of the daemons this one took children from: their descendants are ours too.
  const marks = [mark, ...(options.predecessor?.snapshot?.marks ?? [])];
  let handover: HandoverInfo | undefined;
  /** Set once a new daemon took over: the stop leaves the socket and the children alone. */
  let handedOver = false;
  let takeLock: (() => Promise<boolean>) | undefined;

  const requirePool = (): McpPool => {
    if (!pool) throw new Error("the daemon has not started");
    return pool;
  };

  const status = (): DaemonStatus => ({
    pid: process.pid,
    version: VERSION,
    startedAt,
    socketPath: paths.socketPath,
    configPath: paths.configPath,
    config: configStatus(),
    servers: pool?.state() ?? [],
    clients: server?.clients ?? 0,
    connections: connections.state(),
    saveProblems: saves.state(),
    ...(handover ? { handover } : {}),
    ...(log === undefined ? {} : { log: logState(log) }),
  });

  // The file's status and whether its watcher is watching.
  const configStatus = (): ConfigStatus => ({
    ...config.status(),
    ...(watcher?.state() ?? {}),
  });

  // A reload starts the watch again from what exists now: a watcher that lost its folder,
  // or failed, watches again.
  const reload = async (): Promise<ConfigStatus> => {
    await watcher?.rearm();
    await requirePool().sync();
    return configStatus();
  };

  const daemon: Daemon = {
    paths,
    connections,
    get pool() {
      return requirePool();
    },
    status,
    reload,
    settled: () => requirePool().flush(),
    renew: (reason) => keeper?.renew(reason) ?? Promise.resolve(false),
    onRenewed: (listener) => void renewed.add(listener),
    async handOver(keepId) {
      const lock = {
        release: () => releaseLock?.(),
        take: () => takeLock?.() ?? Promise.resolve(false),
      };
      const from = { pid: process.pid, version: VERSION, startedAt };
      const inherited = options.listenFd !== undefined || options.predecessor?.snapshot?.inherited;
      const fronts = options.onHandingOver;
      const serving = server && pool && log && !stopping ? { server, pool, log } : undefined;
      const deps = { ...serving, lock, fronts, successor: options.successor, from, marks };
      const result = await handOver({ ...deps, inherited: inherited === true }, keepId);
      handedOver = true;
      // After this answer is written, as `daemon/shutdown` does.
      setImmediate(() => options.onShutdownRequested?.());
      return result;
    },

    async start() {
      if (listenFd === undefined) checkSocketPath(paths.socketPath);
      const runtime = prepareRuntimeDir(paths.socketDir);
      prepareDir(paths.dataDir, 0o700);
      prepareDir(paths.logDir, 0o700);
      log ??= createLog(paths.logDir);
      const daemonLog = log;
      if (runtime.tightened) daemonLog.info(`mcpool: tightened ${paths.socketDir} to 0700`);

      // A holder the lock cannot see may still serve its socket. Not with an inherited
      // listener: that is our own, and a probe of its path would find it live.
      // The abstract name outlives any removal of the folder: one daemon per socket path.
      const acquire = () =>
        acquireInstanceLock(paths.lockPath, {
          ...(listenFd === undefined
            ? { isDaemonAlive: () => socketAnswers(paths.socketPath) }
            : {}),
          ...(HAS_ABSTRACT_SOCKETS ? { name: lockName(paths.socketPath) } : {}),
          onNameSquatted: (name) =>
            daemonLog.error(
              `mcpool: the lock name @${name} is held by a process that is not ours; only the lock file ${paths.lockPath} keeps a second daemon away`,
            ),
        });
      const lock = await acquire();
      if (!lock.acquired) return { started: false, holderPid: lock.holderPid };
      releaseLock = lock.release;
      takeLock = async () => {
        const again = await acquire();
        if (again.acquired) releaseLock = again.release;
        return again.acquired;
      };
      const restoreLock = lock.restore;
      // Records of daemons that died without removing theirs.
      liveDaemons(paths.dataDir, { sweep: true });

      if (options.envFile === true) applyEnvFile(paths.envFilePath, daemonLog);

      const records = createPidRecords(paths.dataDir, { log: daemonLog, mark, health: saves });
      const { reaped } = await records.reapPredecessors({ log: daemonLog });
      if (reaped.length > 0)
        daemonLog.info(
          `mcpool: reaped ${reaped.length} children of a previous daemon: ${reaped.join(", ")}`,
        );

      const logRead = createReadLog(paths.configPath, daemonLog);
      const first = await config.read();
      logRead(first.status);
      configureCap(connections, first.pool);

      pool = new McpPool({
        clientName: "mcpool",
        clientVersion: VERSION,
        log: daemonLog,
        rowsFrom: basename(paths.configPath),
        load: async () => {
          const read = await config.read();
          logRead(read.status);
          configureCap(connections, read.pool);
          monitor?.setRows(read.rows);
          return read.rows;
        },
        childMark: { [MARK_VARIABLE]: mark },
        ...(options.predecessor ? { handed: options.predecessor.handed } : {}),
        onChild: (event) => {
          if (event.type === "spawn") records.add(event.pid, event.serverId);
          else records.remove(event.pid);
        },
        toolsCache: createFileToolsCache(paths.dataDir, saves),
        // A lazy row's tools are learned once, so agents can find them (pool-options.ts).
        learnLazyTools: true,
        tokenStore: createFileTokenStore(paths.dataDir, saves),
        pins: createFilePinStore(paths.dataDir, saves),
        // Agents answer the elicitations of their own calls, so every connection
        // declares the capability; a question no agent takes is declined.
        onElicit: () => ({ action: "decline" }),
        // Sampling likewise, unless `"sampling": false`; a request no agent takes is refused.
        ...(sectionValues(first.pool, "daemon").sampling === false
          ? {}
          : {
              onSample: () => {
                throw new McpError(ErrorCode.MethodNotFound, "sampling not available");
              },
            }),
        ...sectionValues(first.pool, "pool"),
        ...options.pool,
      });

      monitor = new PoolMonitor({
        pool,
        usageStore: createFileUsageStore(paths.dataDir, saves),
        ...sectionValues(first.pool, "monitor"),
        log: daemonLog,
      });
      monitor.setRows(first.rows);
      monitor.start();

      // The first reconcile starts before the socket opens, so a request that arrives at
      // once finds every row registered; it runs in the background, because a wedged server
      // must not keep the socket from answering. Early listings and calls wait for it.
      pool
        .sync(first.rows)
        .catch((error: unknown) => daemonLog.error(`mcpool: ${(error as Error).message}`));

      server = createSocketServer({
        ...(listenFd !== undefined ? { listenFd } : { socketPath: paths.socketPath }),
        handlers: createHandlers({
          pool,
          monitor,
          status,
          reload,
          shutdown: () => options.onShutdownRequested?.(),
          handover: (keepId) => daemon.handOver(keepId),
          version: VERSION,
        }),
        cap: connections,
        log: daemonLog,
      });
      try {
        await server.start();
      } catch (error) {
        // The children the first reconcile started must not outlive a daemon that never served.
        await pool.close().catch(() => undefined);
        await monitor.close().catch(() => undefined);
        releaseLock?.();
        throw error;
      }
      // An inherited socket is the service manager's to keep (`systemctl --user restart
      // mcpool.socket` re-creates it).
      if (listenFd === undefined) {
        keeper = keepSocket({
          socketPath: paths.socketPath,
          server,
          restoreLock,
          onRenewed: () => {
            for (const listener of renewed) listener();
          },
          log: daemonLog,
        });
      }

      watcher = watchConfig(
        paths.configPath,
        () => {
          pool?.syncSoon().catch(() => undefined);
        },
        // Logged, and the path read again so status says what is there now.
        (error) => {
          daemonLog.error(`mcpool: watching ${paths.configPath}: ${error.message}`);
          pool?.syncSoon().catch(() => undefined);
        },
      );
      await watcher.ready;
      try {
        removeRecord = writeDaemonRecord(paths.dataDir, {
          socket: paths.socketPath,
          version: VERSION,
          startedAt,
          handlesSignals: options.handlesSignals === true,
        });
      } catch (error) {
        daemonLog.error(
          `mcpool: could not record this daemon in ${paths.dataDir}: ${(error as Error).message}; \`mcpool status\` cannot find it if its socket goes`,
        );
      }
      if (options.predecessor) {
        const concluded = await concludeAdoption(pool, options.predecessor, daemonLog);
        if (!concluded.serve) {
          await daemon.stop();
          return { started: false, handedBack: concluded.why };
        }
        handover = concluded.info;
      }
      daemonLog.info(
        `mcpool: serving ${paths.socketPath} (pid ${process.pid}, config ${paths.configPath})`,
      );
      return { started: true };
    },

    stop() {
      stopping ??= (async () => {
        // No longer serving: nothing should signal or look for us from here on.
        removeRecord?.();
        keeper?.close();
        await watcher?.close().catch(() => undefined);
        // Handed over: the socket is the new daemon's, its path with it.
        if (handedOver) await server?.abandon().catch(() => undefined);
        else await server?.close().catch(() => undefined);
        await pool?.close().catch(() => undefined);
        await monitor?.close().catch(() => undefined);
        // What left its server's process group (setsid) outlived the stop ladder: end it too.
        // Handed over: what carries the mark is the new daemon's now.
        if (pool !== undefined && !handedOver) {
          for (const each of marks)
            await endMarked(each, log ? { log } : {}).catch(() => undefined);
        }
        releaseLock?.();
        log?.info("mcpool: stopped");
      })();
      return stopping;
    },
  };
  return daemon;
}

/** The env file into process.env (values win), logged by name only: values may be secrets. */
/** `mcpool.maxConnections` and `mcpool.maxConnectionsPerProcess` into the cap. */
function configureCap(cap: ConnectionCap, section: Record<string, unknown>): void {
  const values = sectionValues(section, "daemon");
  cap.configure(values.maxConnections, values.maxConnectionsPerProcess);
}

/** The log file for status: its path, and why it is not written when it is not. */
function logState({ path, problem }: DaemonLog): { path: string; problem?: string } {
  return problem === undefined ? { path } : { path, problem };
}

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
