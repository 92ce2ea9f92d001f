/**
 * The lean `mcpool bridge`: with the daemon's MCP socket for the scope present,
 * `mcpool bridge [--server ID | --catalog[=auto]] [--socket PATH]` is a byte pipe — stdin to the socket, the
 * socket to stdout — that loads nothing but Node's net, fs and path: a host's session costs
 * a bare Node process, not Node plus the MCP SDK (bench/entry.mjs). A socket absent or refusing
 * (no daemon yet, a daemon without MCP sockets), `--http` and `--servers` go to the full CLI,
 * which starts the daemon when needed and serves through the SDK bridge. Once piping, a
 * daemon that restarts keeps the host's session (src/bridge/lean/session.ts).
 */
import { randomUUID } from "node:crypto";
import { existsSync, fstatSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { connect, Socket } from "node:net";
import { resolve } from "node:path";
// The client's paths.js alone (node:fs, os and path), not the client: one discovery for all.
import { defaultSocketPath } from "mcpool-client/paths";
import { ColdAnswers } from "../bridge/lean/cold-answers.js";
import { HOST_GONE } from "../bridge/lean/host-signals.js";
import { mcpCatalogSocketPath, mcpSocketPath } from "../bridge/lean/mcp-socket-paths.js";
import { LeanSession, reconnectWindowMs, START_DAEMON } from "../bridge/lean/session.js";

/** The MCP socket a lean bridge pipes to, when argv asks for one it can serve; else undefined. */
export function leanBridgeSocket(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): string | undefined {
  return leanBridgeTarget(argv, env)?.path;
}

/**
 * The MCP socket (`path`), the daemon's socket it belongs to, the server it serves, if one,
 * and the name its first answers are recorded under (`cold`: the server's id, `@pool`,
 * `@catalog`; none for `--catalog=auto`).
 */
interface Target {
  path: string;
  daemon: string;
  server: string | undefined;
  cold: string | undefined;
}

/** The MCP socket (`path`) and the daemon's socket it belongs to, as leanBridgeSocket. */
function leanBridgeTarget(argv: readonly string[], env: NodeJS.ProcessEnv): Target | undefined {
  if (argv[0] !== "bridge") return undefined;
  let server: string | undefined;
  let socket: string | undefined;
  let catalog: "on" | "auto" | undefined;
  for (let i = 1; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    // The pool's catalog sockets: `--catalog` takes no value, `--catalog=auto` its own.
    const mode = flag === "--catalog" ? "on" : flag === "--catalog=auto" ? "auto" : undefined;
    if (mode !== undefined) {
      if (catalog !== undefined) return undefined;
      catalog = mode;
      i -= 1;
      continue;
    }
    if (value === undefined || value.startsWith("-")) return undefined;
    if (flag === "--server" && server === undefined) server = value;
    else if (flag === "--socket" && socket === undefined) socket = value;
    else return undefined;
  }
  const daemon = resolve(socket ?? defaultSocketPath(env));
  // One server in catalog mode has no socket of its own: the full CLI serves it.
  const path =
    catalog === undefined
      ? mcpSocketPath(daemon, server)
      : server === undefined
        ? mcpCatalogSocketPath(daemon, catalog)
        : undefined;
  const cold =
    server ?? (catalog === undefined ? "@pool" : catalog === "on" ? "@catalog" : undefined);
  return path === undefined ? undefined : { path, daemon, server, cold };
}

/**
 * The waits between looks at our parent after stdin's EOF, ms (the first look is at the EOF):
 * a host that dies has its descriptors closed by the kernel a moment before we are handed to
 * a new parent, so the EOF can come first. The sum (175 ms) bounds how long a half-close waits
 * before it reaches the daemon.
 */
export const PARENT_CHECKS_MS = [0, 5, 20, 50, 100] as const;

/** Whether fds `a` and `b` are one open file (a host that gave one socket for both). */
function sameFile(a: number, b: number): boolean {
  const [x, y] = [fstatSync(a), fstatSync(b)];
  return x.dev === y.dev && x.ino === y.ino;
}

/**
 * Where the daemon's bytes go: stdout, opened as a socket we also read when it is one of its
 * own (a Node host's stdio is a socketpair per stream), so that the host's death — its end
 * closing — shows at once as an EOF there; a host never writes on our stdout. A pipe, a file
 * or a terminal is written as process.stdout; a failed write says the host is gone too.
 */
function hostOutput(hostGone: () => void): NodeJS.WritableStream {
  let own = false;
  try {
    own = fstatSync(1).isSocket() && !sameFile(0, 1);
  } catch {
    // No stdin or stdout to look at: process.stdout says what it can.
  }
  if (!own) {
    process.stdout.on("error", hostGone);
    return process.stdout;
  }
  const out = new Socket({ fd: 1, readable: true, writable: true });
  out.once("end", hostGone);
  out.on("error", hostGone);
  out.resume();
  return out;
}

/**
 * Joins stdio to the connected socket until either end is done, through a LeanSession that
 * keeps the host's session across a daemon restart (src/bridge/lean/session.ts). The host's stdin EOF
 * is a half-close (a pipe host still gets its answers, README "The lean entry"), but a host
 * that is gone (SIGKILLed, crashed) ends the session at once, and the daemon cancels its
 * calls upstream: we say HOST_GONE and close. Gone is: its end of a
 * socketpair stdout closed, a write to stdout failed, or our parent changed — looked at on
 * PARENT_CHECKS_MS after stdin's EOF, as the kernel reparents us just after that EOF.
 *
 * A cold start (`cold`, `starting`: the daemon this entry starts) exits only once that start
 * has settled, however soon its host is done — or ends it by a signal: a host answered from
 * the recording alone (Codex lists and leaves; Claude Code's `mcp list` SIGTERMs its servers)
 * still leaves its daemon serving, where an exit in the middle of the start would leave none
 * — or one given way to a daemon still shutting down, never started again.
 */
function pipe(
  socket: Socket | undefined,
  target: Target,
  cold?: { answers: ColdAnswers; starting: Promise<void>; launched: Promise<void> },
): LeanSession {
  const parent = process.ppid;
  let gone = false;
  let halfClosed = false;
  const exit = (): void => {
    const leave = (): never => process.exit(0);
    if (cold === undefined) leave();
    else void cold.starting.then(leave, leave);
  };
  const hostGone = (): void => {
    if (gone) return;
    gone = true;
    const current = session.current;
    session.stop();
    if (current === undefined) return exit();
    // Half-closed already: we cannot say it; the daemon's next probe finds us gone.
    if (halfClosed) current.destroy();
    else current.end(HOST_GONE, () => current.destroy());
    current.once("close", exit);
  };
  const out = hostOutput(hostGone);
  // The daemon ended the session, or went away for good with the host done: nothing more.
  const session = new LeanSession(socket, {
    path: target.path,
    daemonSocket: target.daemon,
    windowMs: reconnectWindowMs(process.env),
    input: process.stdin,
    out,
    done: () => out.end(exit),
    // Made once: every connection of this process names its host the same (host-signals.ts).
    hostName: randomUUID(),
    ...(cold !== undefined ? { cold: cold.answers } : {}),
  });
  const verdict = (step: number): void => {
    if (gone) return;
    if (process.ppid !== parent) return hostGone();
    const wait = PARENT_CHECKS_MS[step + 1];
    if (wait === undefined) {
      halfClosed = true;
      session.hostEnd();
      return;
    }
    setTimeout(() => verdict(step + 1), wait);
  };
  process.stdin.once("end", () => verdict(0));
  if (cold !== undefined) endsAfterStart(cold.starting, hostGone);
  // By hand, not Readable.pipe(): the session reads whole lines, and pipe() would look at
  // process.stdout, which would open fd 1 a second time beside `out`.
  process.stdin.setEncoding("utf8");
  // A cold start reads the host's lines (and answers them) once its daemon is spawned.
  if (cold === undefined) process.stdin.on("data", session.fromHost);
  else void cold.launched.then(() => process.stdin.on("data", session.fromHost));
  return session;
}

/** How a host ends its server process (the SDK's stdio client: SIGTERM, after stdin's end). */
const END_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/**
 * While `starting` is under way, a host that ends its entry by a signal is gone as one that
 * closed its end is (`hostGone`, whose exit waits for the start): cut short before it spawned
 * the daemon (a host may end it before it read a line), the start would leave none. Once it
 * is over, a signal ends the entry at once, as ever.
 */
function endsAfterStart(starting: Promise<void>, hostGone: () => void): void {
  const ending = (): void => hostGone();
  for (const signal of END_SIGNALS) process.once(signal, ending);
  const over = (): void => {
    for (const signal of END_SIGNALS) process.off(signal, ending);
  };
  starting.then(over, over);
}

/**
 * Pipes to the MCP socket argv names when it answers; else `fullCli()` (main.ts), which
 * reads argv itself.
 */
export function runLeanBridge(fullCli: () => void): void {
  const target = leanBridgeTarget(process.argv.slice(2), process.env);
  if (target === undefined) return fullCli();
  if (!existsSync(target.path)) return void coldStart(target, fullCli);
  const socket = connect(target.path);
  const refused = (): void => {
    socket.destroy();
    void coldStart(target, fullCli);
  };
  socket.once("error", refused);
  socket.once("connect", () => {
    socket.off("error", refused);
    pipe(socket, target);
  });
}

/**
 * No daemon: a host whose opening the daemon answered before on the same scope (a server, the
 * whole pool, its catalogue), under the same rows and tools caches, is answered that while the
 * daemon starts (src/bridge/lean/cold-answers.ts, daemon/stores/cold-answers.ts), and its
 * session carried on to the daemon once it answers. Else `fullCli()` starts the daemon and
 * serves as ever.
 */
async function coldStart(target: Target, fullCli: () => void): Promise<void> {
  const { cold } = target;
  if (cold === undefined) return fullCli();
  const { coldOpenings } = await import("../daemon/stores/cold-answers.js");
  const openings = coldOpenings(target.daemon, cold);
  if (openings === undefined) return fullCli();
  let spawned = (): void => undefined;
  const launched = new Promise<void>((resolve) => (spawned = resolve));
  const starting = startDaemon(target.daemon, cold, spawned);
  // The recorded answers go out once the daemon is spawned (or its start is over): a host
  // that kills its entry (SIGKILL) the moment it has them still leaves a daemon starting.
  const session = pipe(undefined, target, {
    answers: new ColdAnswers(openings),
    starting,
    launched: Promise.race([launched, starting.catch(() => undefined)]),
  });
  starting.then(session.daemonStarted.bind(session), (error: unknown) => {
    session.daemonFailed(
      `mcpool: no daemon at ${target.daemon} (${(error as Error).message}); ${START_DAEMON}, then restart this MCP server.`,
    );
  });
}

/**
 * Starts the daemon on `daemonSocket` as `mcpool bridge` does (mcpool-client's auto-start:
 * detached, the service's environment, one daemon however many entries start one), and
 * resolves once it answers there; rejects with why it could not.
 */
async function startDaemon(daemonSocket: string, id: string, spawned: () => void): Promise<void> {
  const { connect } = await import("mcpool-client");
  const main = fileURLToPath(new URL("./main.js", import.meta.url));
  const client = await connect({
    clientName: `mcpool-bridge/${id}`,
    socketPath: daemonSocket,
    autoStart: true,
    autoStartCommand: [process.execPath, main, "serve"],
    onAutoStart: spawned,
  });
  await client.close();
}
