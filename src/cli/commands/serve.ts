/**
 * `mcpool serve`: the daemon in this process, until a signal or `mcpool shutdown` stops it.
 * It loads the daemon, and the fronts it starts, when it runs; what it imports up front is
 * small, since main.ts imports it to watch how a launched daemon ends.
 */
import { writeFileSync } from "node:fs";
import { EXIT } from "../output/exit-codes.js";
import type { CommandContext } from "./context.js";
import { UsageError } from "../output/usage-error.js";
import type { Predecessor } from "../../daemon/handover/predecessor.js";

/** LISTEN_FDS for this process: systemd socket activation hands the socket over as fd 3. */
function inheritedListenFd(): number | undefined {
  const fds = Number(process.env.LISTEN_FDS);
  const pid = Number(process.env.LISTEN_PID);
  if (!(fds >= 1) || (process.env.LISTEN_PID !== undefined && pid !== process.pid))
    return undefined;
  return 3;
}

let launched: { serving(): void } = { serving: () => undefined };

/**
 * A daemon an agent started is not that agent's child (client/src/dial.ts): it says how it
 * ended, if it ends without serving, in the file MCPOOL_LAUNCH_STATUS names — its exit
 * code, 0 when another daemon held the lock. Never seen by its children. main.ts calls this
 * before anything can fail: a bad flag fails a launched daemon too.
 */
export function watchLaunch(): void {
  const file = process.env.MCPOOL_LAUNCH_STATUS;
  delete process.env.MCPOOL_LAUNCH_STATUS;
  let serving = false;
  if (file) {
    process.once("exit", (code) => {
      if (serving) return;
      try {
        writeFileSync(file, String(code), { flag: "wx", mode: 0o600 });
      } catch {
        // The starter's bound tells it instead.
      }
    });
  }
  launched = { serving: () => void (serving = true) };
}

export async function serveCommand(
  context: CommandContext<{ handover?: string; keeper?: boolean }>,
): Promise<number> {
  const { config: configPath, socket: socketPath, handover } = context.flags;
  if (context.flags.keeper === true) {
    if (handover !== undefined) throw new UsageError("--keeper and --handover do not go together");
    const { command, args } = daemonCommand(["serve"], { configPath, socketPath });
    const { keepDaemon } = await import("../service/keeper.js");
    return keepDaemon({ command, args, socketPath, say: context.err });
  }
  const listenFd = inheritedListenFd();
  const { startFronts } = await import("./serve-fronts.js");
  let fronts: Awaited<ReturnType<typeof startFronts>>;
  // Started by `mcpool restart`: the old daemon's snapshot before anything else.
  const predecessor = handover === undefined ? undefined : await joinPredecessor(handover);
  // Children must never see these; the pool strips them too, this keeps them out of our own env.
  for (const name of ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"]) delete process.env[name];
  let stopRequested: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  const { createDaemon } = await import("../../daemon/daemon.js");
  // V8's collector, turned on once here and only in the daemon (collect.ts says why).
  const collector = (await import("../../pool/core/collect.js")).exposeV8Collector();
  const daemon = await createDaemon({
    ...(collector ? { pool: { collector } } : {}),
    ...(configPath ? { configPath } : {}),
    ...(socketPath ? { socketPath } : {}),
    ...(listenFd !== undefined ? { listenFd } : {}),
    envFile: true,
    handlesSignals: true,
    onShutdownRequested: () => stopRequested(),
    ...(predecessor ? { predecessor } : {}),
    successor: (fdCount) => successorCommand(fdCount, { configPath, socketPath }),
    // The MCP sockets' listening sockets go to the new daemon with the daemon's own.
    onHandingOver: {
      hold: async () => fronts?.hold() ?? [],
      letGo: () => fronts?.letGo(),
      resume: async () => {
        if (fronts) await fronts.resume();
        else fronts = await startFronts(daemon, context.err);
      },
      // Forgotten first: the stop after waits on no end of theirs (hand-over.ts bounds it).
      release: async () => {
        const handed = fronts;
        fronts = undefined;
        await handed?.abandon();
      },
    },
  });
  // Before start: once the daemon's record says it takes SIGUSR1, it must (a signal with no
  // listener would open Node's inspector instead). It re-creates the socket, as tmux does.
  const renew = (): void => {
    daemon.renew("SIGUSR1").catch(() => undefined);
  };
  process.on("SIGUSR1", renew);
  // So are SIGTERM and SIGINT, which must stop the daemon, never kill it outright (which
  // would leave what its children started that left their group): the socket answers, and
  // the record says so, before start() is over; one that comes meanwhile stops it once
  // started. Not yet for a hand-over's new daemon: until it has taken the children up, the old
  // one governs it (tells it to let go, kills it past a bound), and a service manager's stop
  // then reaches both; it ends at once, as its children are still the old daemon's.
  const stop = (): void => stopRequested();
  const signals = ["SIGTERM", "SIGINT"] as const;
  const watchStop = (): void => signals.forEach((signal) => process.on(signal, stop));
  if (predecessor === undefined) watchStop();
  const result = await daemon.start();
  if (!result.started) {
    process.off("SIGUSR1", renew);
    for (const signal of signals) process.off(signal, stop);
    if ("handedBack" in result) {
      context.err(`mcpool: did not take over: ${result.handedBack}`);
      return EXIT.failed;
    }
    return (await import("./lost-socket.js")).serveGaveWay(
      daemon.paths.socketPath,
      result.holderPid,
      context.err,
    );
  }
  launched.serving();
  if (predecessor !== undefined) watchStop();
  process.on("SIGHUP", () => {
    daemon.reload().catch(() => undefined);
  });
  fronts = await startFronts(daemon, context.err, predecessor?.fronts);
  // What a burst of calls grew, given back once it is over (quiet-gc.ts).
  const quietGc = (await import("../../daemon/process/quiet-gc.js")).startQuietGc(
    collector ? { collect: collector.full } : {},
  );
  await stopped;
  quietGc.stop();
  // A front that fails to close never keeps the daemon from stopping its children.
  await fronts?.close().catch((error: unknown) => {
    context.err(`mcpool: closing the MCP sockets: ${(error as Error).message}`);
  });
  await daemon.stop();
  if (daemon.failure === undefined) return EXIT.ok;
  context.err(`mcpool: the daemon stopped: ${daemon.failure}`);
  return EXIT.failed;
}

/** `--handover N`: N descriptors from fd 4 on, read from the old daemon on fd 3. */
function joinPredecessor(count: string): Promise<Predecessor> {
  const fds = Number(count);
  if (!Number.isSafeInteger(fds) || fds < 1) {
    throw new UsageError(
      `--handover takes the number of descriptors passed (1 or more), not "${count}"`,
    );
  }
  return import("../../daemon/handover/predecessor.js").then(({ joinPredecessor: join }) =>
    join(fds),
  );
}

/**
 * The new daemon: this node, running the installed `main.js` as this one was started (after
 * `npm install -g`, that path holds the new version), with the same --config and --socket.
 */
function successorCommand(
  fdCount: number,
  given: { configPath: string | undefined; socketPath: string | undefined },
): { command: string; args: string[] } {
  return daemonCommand(["serve", "--handover", String(fdCount)], given);
}

/** This node running the installed `main.js` with `words`, and the same --config and --socket. */
function daemonCommand(
  words: string[],
  given: { configPath: string | undefined; socketPath: string | undefined },
): { command: string; args: string[] } {
  const main = process.argv[1];
  if (main === undefined) throw new Error("this process was not started from a script");
  return {
    command: process.execPath,
    args: [
      main,
      ...words,
      ...(given.configPath !== undefined ? ["--config", given.configPath] : []),
      ...(given.socketPath !== undefined ? ["--socket", given.socketPath] : []),
    ],
  };
}
