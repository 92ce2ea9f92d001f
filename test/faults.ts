/**
 * Every promise mcpool makes about the faults and bad input it must survive, grouped by
 * section, each named with the tests that prove it; test/unit/faults-index.test.ts fails when a
 * test named below is renamed or deleted. A promise no test proves yet says so in `gap`,
 * with what that test would need.
 */

export interface FaultProof {
  /** Path from the repository root. */
  file: string;
  /** The it()/test() title, or a substring of it that names one test in `file`. */
  test: string;
}

export interface FaultPromise {
  /** The section the promise belongs to. */
  section: string;
  /** "What goes wrong → what mcpool does". */
  promise: string;
  proofs: FaultProof[];
  /** Set while part of the promise has no test: what is missing and what a test would need. */
  gap?: string;
}

const IDENTITY = "The socket and the daemon's identity";
const CHILDREN = "Children";
const WIRE = "The wire";
const REMOTE = "Remote servers";
const CONFIG = "Configuration";
const SECRETS = "Secrets";
const DAYS = "A service left running for days";
const WEEKS = "A service left running for weeks";

const daemon = "test/integration/daemon.test.ts";
const identity = "test/integration/daemon-identity.test.ts";
const permissions = "test/integration/daemon-permissions.test.ts";
const socketServer = "test/integration/socket-server.test.ts";
const poolStdio = "test/integration/pool-stdio.test.ts";
const chaos = "test/integration/chaos.test.ts";
const selfHealing = "test/integration/self-healing.test.ts";
const daemonHealing = "test/integration/daemon-self-healing.test.ts";
const autostart = "test/integration/daemon-autostart.test.ts";
const remoteHttp = "test/integration/remote-http.test.ts";
const routing = "test/integration/routing.test.ts";
const gaps = "test/integration/faults-gaps.test.ts";
const keeping = "test/integration/daemon-socket-keeping.test.ts";

export const FAULT_PROMISES: readonly FaultPromise[] = [
  {
    section: IDENTITY,
    promise:
      "Daemon started under `umask 000` → runtime dir 0700, socket 0600, both owned by the user.",
    proofs: [
      { file: daemon, test: "creates its socket 0600 in a 0700 directory even under umask 000" },
      {
        file: permissions,
        test: "is owned by the daemon's user with mode 0600 in a 0700 directory",
      },
      {
        file: identity,
        test: "creates a missing directory, and the parents it needs, 0700 under umask 000",
      },
    ],
  },
  {
    section: IDENTITY,
    promise:
      "Runtime dir exists but belongs to another user, or is a symlink → refused, never chmod'ed or followed; a clear error names the path.",
    proofs: [
      { file: gaps, test: "refuses a runtime directory that is a symlink, naming it" },
      {
        file: identity,
        test: "refuses a symlink without following it, leaving its target untouched",
      },
      { file: identity, test: "refuses a dangling symlink rather than creating its target" },
      {
        file: identity,
        test: "refuses a directory that belongs to another uid, and never chmods it",
      },
      { file: identity, test: "refuses a directory chowned to nobody (65534)" },
      { file: identity, test: "refuses a shared sticky world-writable directory" },
    ],
  },
  {
    section: IDENTITY,
    promise: "Runtime dir is ours but 0755 → tightened to 0700 before listening.",
    proofs: [
      {
        file: gaps,
        test: "tightens a runtime directory of ours from 0755 to 0700 before it serves",
      },
      { file: identity, test: "tightens an existing 0755 directory of ours to 0700 and says so" },
    ],
  },
  {
    section: IDENTITY,
    promise:
      "Socket path longer than the platform allows (108 bytes Linux, 104 macOS) → a clear error before listening, never a silently truncated path.",
    proofs: [
      { file: gaps, test: "refuses a socket path longer than sun_path before listening" },
      {
        file: "test/unit/daemon-paths.test.ts",
        test: "knows sun_path less its NUL: 107 bytes on Linux, 103 on macOS",
      },
      {
        file: "test/unit/daemon-paths.test.ts",
        test: "counts multi-byte characters in bytes, not characters",
      },
    ],
  },
  {
    section: IDENTITY,
    promise: "Another uid connects → refused (test it as a second, unprivileged user).",
    proofs: [
      { file: permissions, test: "refuses a raw connect from another user" },
      { file: permissions, test: "refuses another user" },
      { file: permissions, test: "lets its own user in" },
    ],
  },
  {
    section: IDENTITY,
    promise:
      "The client library finds a socket owned by another uid → refuses before sending a byte.",
    proofs: [
      {
        file: permissions,
        test: "is refused by a client of another uid before a byte is sent, even root",
      },
      {
        file: socketServer,
        test: "refuses a socket owned by another uid without sending it a byte",
      },
      { file: socketServer, test: "refuses a symlink to a real socket rather than follow it" },
    ],
  },
  {
    section: IDENTITY,
    promise: "Ten daemons started within 50 ms → exactly one serves; the others exit 0 saying so.",
    proofs: [
      { file: gaps, test: "lets exactly one of ten `mcpool serve` started at once serve" },
      { file: identity, test: "lets exactly one win; the nine others name the winner" },
      { file: identity, test: "lets exactly one win when they all find a stale lock to recover" },
      { file: daemon, test: "lets a second serve exit 0 saying the first is running" },
    ],
  },
  {
    section: IDENTITY,
    promise:
      "Stale socket left by a SIGKILLed daemon → the next start replaces it; clients reconnect.",
    proofs: [
      {
        file: autostart,
        test: "brings one daemon back for five agents although the dead one left its socket file",
      },
      {
        file: "test/integration/bridge.test.ts",
        test: "survives a daemon restart: the call in flight fails with an MCP error, later calls work",
      },
      {
        file: socketServer,
        test: "redials after the daemon restarts on the same path and re-subscribes by itself",
      },
      {
        file: autostart,
        test: "never takes the socket of a live daemon whose lock names a dead process",
      },
    ],
  },
  {
    section: IDENTITY,
    promise:
      "A pid record names a live, unrelated process (pid reused) → that process is never signalled (check the recorded start time).",
    proofs: [
      {
        file: identity,
        test: "never signals a pid that now names another process, and drops its record",
      },
      { file: identity, test: "leaves what a vanished leader left in its group" },
      {
        file: identity,
        test: "treats a live pid with another start time as stale: the pid was reused",
      },
    ],
  },

  {
    section: CHILDREN,
    promise:
      "A server started through a wrapper (`sh -c`, `npx`) → stopping it leaves no process of its group behind.",
    proofs: [
      {
        file: poolStdio,
        test: "starts each child in its own process group and stops the whole group, wrapper included",
      },
      {
        file: "test/integration/fixtures.test.ts",
        test: "serves from a node grandchild in the sh's process group",
      },
    ],
  },
  {
    section: CHILDREN,
    promise: "A child that ignores stdin EOF and traps SIGTERM → SIGKILL after the grace period.",
    proofs: [
      { file: poolStdio, test: "stops a child that ignores stdin EOF and SIGTERM with SIGKILL" },
      { file: daemon, test: "stops every child and removes its socket on SIGTERM, exiting 0" },
      {
        file: identity,
        test: "escalates to SIGKILL when a child ignores SIGTERM past the grace period",
      },
    ],
  },
  {
    section: CHILDREN,
    promise:
      "`kill -9` of a child with calls in flight from several agents → each call gets exactly one error; the server shows `error` with its stderr tail; other servers unaffected.",
    proofs: [
      { file: gaps, test: "fails each agent's call in flight once when its child is SIGKILLed" },
      {
        file: selfHealing,
        test: "fails any other cut-off call with server-crashed, saying the tool may have run",
      },
      {
        file: poolStdio,
        test: "fails the call in flight once with server-crashed, and keeps its tools as last-known",
      },
    ],
  },
  {
    section: CHILDREN,
    promise:
      "A command that does not exist (ENOENT) or exits 1 at once → `error` with the reason and the backoff; no respawn storm.",
    proofs: [
      {
        file: poolStdio,
        test: "reports a command that does not exist with its reason and holds it off with backoff",
      },
      { file: poolStdio, test: "puts the stderr of a child that dies at start into its error" },
      {
        file: selfHealing,
        test: "backs off a server that dies right after each start, retries by itself, and says crash-loop",
      },
    ],
  },
  {
    section: CHILDREN,
    promise:
      "A child that stops answering (SIGSTOP) → its calls time out; other servers' latency unaffected.",
    proofs: [
      {
        file: selfHealing,
        test: "finds a SIGSTOPped server by a ping after a timeout, shows it unresponsive, replaces it",
      },
      { file: gaps, test: "answers other servers while a SIGSTOPped one holds a call" },
      { file: poolStdio, test: "times out a call that never answers, with the bound in the error" },
    ],
  },
  {
    section: CHILDREN,
    promise:
      "A child writing non-JSON lines on stdout → they are skipped and logged, calls still work.",
    proofs: [
      { file: poolStdio, test: "skips junk lines on a child's stdout and still answers" },
      {
        file: "test/integration/junk-output.test.ts",
        test: "is logged tagged, redacted, printable and rate-limited, and calls still work",
      },
    ],
  },
  {
    section: CHILDREN,
    promise:
      "A child writing a huge line, or gigabytes to stderr → capped buffers; daemon memory stays bounded.",
    proofs: [
      {
        file: gaps,
        test: "keeps the daemon's memory bounded while a child writes hundreds of MiB to stderr",
      },
      {
        file: gaps,
        test: "gives up on a stdout line past the cap, keeping the daemon's memory bounded",
      },
      {
        file: "test/unit/line-reader.test.ts",
        test: "measures a 40 MB line without holding more than its cap, then reads the next line whole",
      },
    ],
  },
  {
    section: CHILDREN,
    promise: "UTF-8 split across chunk boundaries → decoded exactly.",
    proofs: [
      {
        file: "test/unit/line-reader.test.ts",
        test: "decodes a character split across chunk boundaries exactly",
      },
      {
        file: "protocol/test/codec.test.ts",
        test: "decodes a code point split across chunks, byte by byte",
      },
      {
        file: "protocol/test/codec.test.ts",
        test: "decodes an emoji split in the middle of its four bytes",
      },
    ],
  },
  {
    section: CHILDREN,
    promise:
      "The daemon is killed with SIGKILL → no child survives it under systemd; elsewhere children exit on stdin EOF, and the next daemon reaps the rest from its pid records.",
    proofs: [
      {
        file: daemon,
        test: "leaves no child alive after kill -9 once the next daemon has started",
      },
      {
        file: "test/unit/service-units.test.ts",
        test: "kills the whole control group, restarts on failure and keeps files private",
      },
      {
        file: identity,
        test: "stops a dead daemon's child by its process group and removes the record",
      },
    ],
  },
  {
    section: CHILDREN,
    promise:
      "A child must never inherit the daemon's listening socket or its service variables (`LISTEN_FDS`, `NOTIFY_SOCKET`).",
    proofs: [
      {
        file: daemon,
        test: "serves an inherited listening socket (LISTEN_FDS) that no child inherits, nor the service variables",
      },
    ],
  },
  {
    section: CHILDREN,
    promise: "Arguments containing `$(…)` or `;` → passed literally (no shell).",
    proofs: [{ file: poolStdio, test: "passes arguments containing shell syntax literally" }],
  },

  {
    section: WIRE,
    promise: "Malformed JSON → JSON-RPC parse error; the daemon and other clients unaffected.",
    proofs: [
      {
        file: socketServer,
        test: "answers garbage after hello with a parse error and keeps the connection",
      },
      { file: socketServer, test: "answers garbage before hello with a parse error, then closes" },
      {
        file: daemon,
        test: "keeps serving other agents through garbage, half frames and oversized frames",
      },
    ],
  },
  {
    section: WIRE,
    promise:
      "Valid JSON that is not JSON-RPC, unknown method, wrong params → the right JSON-RPC error.",
    proofs: [
      {
        file: socketServer,
        test: "answers JSON that is not JSON-RPC with invalid request, and keeps the connection",
      },
      {
        file: socketServer,
        test: "answers an unknown method with method not found, and wrong params with invalid params",
      },
    ],
  },
  {
    section: WIRE,
    promise: "Half a frame, then disconnect → nothing leaks (fds, pending maps).",
    proofs: [
      { file: socketServer, test: "forgets half a frame when its peer disconnects" },
      {
        file: daemon,
        test: "keeps serving other agents through garbage, half frames and oversized frames",
      },
      {
        file: "protocol/test/codec.test.ts",
        test: "says when the stream ends inside a frame, and forgets it",
      },
    ],
  },
  {
    section: WIRE,
    promise:
      "A frame over the size cap → refused as it streams, not buffered whole; connection closed.",
    proofs: [
      { file: socketServer, test: "refuses a frame over the cap while it streams, then closes" },
      {
        file: "protocol/test/codec.test.ts",
        test: "refuses a line as soon as its buffered bytes pass the cap, before any newline",
      },
    ],
  },
  {
    section: WIRE,
    promise: "Deeply nested JSON, invalid UTF-8, NUL bytes → a clean error.",
    proofs: [
      { file: socketServer, test: "refuses deeply nested JSON without overflowing the stack" },
      { file: socketServer, test: "refuses invalid UTF-8 and NUL bytes frame by frame" },
    ],
  },
  {
    section: WIRE,
    promise:
      "An agent that never reads its responses → its connection is dropped at an outbound cap; others unaffected.",
    proofs: [
      {
        file: socketServer,
        test: "drops a peer that never reads once its unread answers pass the outbound cap",
      },
    ],
  },
  {
    section: WIRE,
    promise:
      "An agent that disconnects mid-call → the call is cancelled upstream (`notifications/cancelled`); nothing is left in flight.",
    proofs: [
      {
        file: routing,
        test: "cancels upstream a call whose AbortSignal fires, and one whose agent disconnects",
      },
      { file: daemon, test: "cancels the calls of an agent that disconnects mid-call" },
    ],
  },
  {
    section: WIRE,
    promise:
      "Two agents using the same request ids against one shared server → each gets its own answer; progress and elicitation reach only the agent whose call caused them.",
    proofs: [
      {
        file: routing,
        test: "gives two agents with the same request ids each their own answers, progress and elicitations, interleaved",
      },
      {
        file: socketServer,
        test: "answers two peers that use the same request ids each with their own answer",
      },
    ],
  },
  {
    section: WIRE,
    promise: "1,000 connect/disconnect cycles → no fd or memory growth.",
    proofs: [
      {
        file: daemon,
        test: "keeps its file descriptors flat across 1,000 agent connect/disconnect cycles",
      },
      {
        file: socketServer,
        test: "keeps the daemon's fd count flat over 1,000 connect/close cycles",
      },
    ],
    gap:
      "Memory is bounded only coarsely: the 1,000-cycle daemon test allows 64 MiB of RSS growth, " +
      "so a leak under 64 KiB per connection passes; a finer test would compare heap snapshots " +
      "(or RSS after 10,000 cycles) taken after a forced GC in the daemon.",
  },

  {
    section: REMOTE,
    promise:
      "The server restarts and answers 404 for our session → one redial, the request sent again once; never a loop.",
    proofs: [
      {
        file: remoteHttp,
        test: "redials once when the server forgot the session, and the call runs exactly once",
      },
      {
        file: remoteHttp,
        test: "never loops: a server that keeps refusing fails the call after one redial",
      },
      {
        file: remoteHttp,
        test: "shares one redial between concurrent calls that all saw the loss",
      },
    ],
  },
  {
    section: REMOTE,
    promise: "The server is down for minutes → backoff; bounded log volume.",
    proofs: [
      { file: gaps, test: "backs off a remote that stays down, logging each attempt once" },
      {
        file: "test/unit/pool.test.ts",
        test: "backs off exponentially after failures and says crash-loop when a server keeps failing",
      },
    ],
  },
  {
    section: REMOTE,
    promise:
      "tools/list over several pages; a cursor that never advances → every tool collected; the loop stops with an error, not forever.",
    proofs: [
      {
        file: poolStdio,
        test: "collects every page of tools/list and refuses a cursor that never advances",
      },
    ],
  },
  {
    section: REMOTE,
    promise:
      "A redirect to another origin → configured headers and `authorization` not sent there; https never downgraded to http.",
    proofs: [
      {
        file: remoteHttp,
        test: "drops configured headers and authorization on a hop to another origin",
      },
      {
        file: remoteHttp,
        test: "refuses a redirect from https down to plain http; the http server is never asked",
      },
      {
        file: remoteHttp,
        test: "refuses a redirect to plain http off this machine, and bounds the hops",
      },
    ],
  },
  {
    section: REMOTE,
    promise: "A plain-http url that is not loopback → refused at validation with a message.",
    proofs: [
      {
        file: "test/unit/validate.test.ts",
        test: "refuses plain http to a host that is not loopback",
      },
      { file: daemon, test: "reports invalid rows one by one while the valid rows apply" },
      {
        file: remoteHttp,
        test: "refuses at dial time a url whose placeholder host turns out not to be loopback over http",
      },
    ],
  },

  {
    section: CONFIG,
    promise: "Several atomic saves (write temp file, rename) in a row → all applied.",
    proofs: [{ file: gaps, test: "applies every one of several atomic saves in a row" }],
  },
  {
    section: CONFIG,
    promise:
      "A half-written or invalid file → the last good configuration keeps running; the error is in status with the position; no server stopped.",
    proofs: [
      {
        file: daemon,
        test: "keeps the last good configuration running when the file stops parsing, and says where",
      },
      {
        file: "test/integration/config-files.test.ts",
        test: "refuses a file that does not parse, with its line and column",
      },
    ],
  },
  {
    section: CONFIG,
    promise:
      "Ten edits in a second → debounced to a couple of reconciles; old children of edited servers are stopped, never orphaned.",
    proofs: [
      {
        file: gaps,
        test: "debounces ten edits in a burst to a couple of restarts, and leaves no old child behind",
      },
      {
        file: "test/unit/pool.test.ts",
        test: "never spawns an edited server twice when two syncs race",
      },
    ],
  },
  {
    section: CONFIG,
    promise: "Only server X changes → every other server keeps its pid.",
    proofs: [
      { file: daemon, test: "restarts only the edited row's child when mcp.json changes" },
      {
        file: "test/integration/lifecycle.test.ts",
        test: "restarts exactly the edited row of fifty, leaving 49 pids unchanged",
      },
    ],
  },
  {
    section: CONFIG,
    promise: "The file is deleted → the running pool is kept and a warning is reported.",
    proofs: [
      {
        file: gaps,
        test: "keeps the running pool when the file is deleted, and says so in status",
      },
      {
        file: daemon,
        test: "keeps the last good configuration running when the file stops parsing, and says where",
      },
    ],
  },

  {
    section: SECRETS,
    promise:
      "Canary secrets in env and headers → never in logs, status output, events, errors, the tools cache or another server's environment — including when the server crashes, fails to spawn, or answers 401.",
    proofs: [
      {
        file: "test/integration/secrets-canary.test.ts",
        test: "never show a canary in status, events, logs, errors or files, however the servers fail",
      },
      {
        file: "test/integration/oauth-pool.test.ts",
        test: "redacts the OAuth token from what a careless server quotes back in an error",
      },
    ],
  },

  {
    section: DAYS,
    promise:
      "A server killed (OOM killer, SIGKILL) after running fine → back within seconds by itself, every time, its tools offered all along; a server that dies right after each start → backoff, `crash-loop`, no CPU spin.",
    proofs: [
      {
        file: chaos,
        test: "answers what it promises through random SIGKILLs and SIGSTOPs of children and a SIGKILL of the daemon",
      },
      {
        file: daemonHealing,
        test: "brings a child killed with SIGKILL back by itself, twice, tools offered all along",
      },
      {
        file: selfHealing,
        test: "brings a healthy eager server back at once after each SIGKILL, its tools offered all along",
      },
      {
        file: selfHealing,
        test: "backs off a server that dies right after each start, retries by itself, and says crash-loop",
      },
      {
        file: selfHealing,
        test: "says the child's exit and stderr, not the EPIPE of the handshake's write",
      },
    ],
  },
  {
    section: DAYS,
    promise:
      "A server that stops answering (SIGSTOP, a wedged loop) → found, shown `unresponsive`, replaced; other servers untouched.",
    proofs: [
      {
        file: chaos,
        test: "answers what it promises through random SIGKILLs and SIGSTOPs of children and a SIGKILL of the daemon",
      },
      {
        file: daemonHealing,
        test: "finds a SIGSTOPped child, shows it unresponsive, replaces it and serves the next call",
      },
      {
        file: selfHealing,
        test: "finds a SIGSTOPped server by a ping after a timeout, shows it unresponsive, replaces it",
      },
      { file: selfHealing, test: "leaves a server that is only slow alone: it answers the ping" },
    ],
  },
  {
    section: DAYS,
    promise:
      "The daemon killed with SIGKILL → the next agent that auto-starts brings it back although the socket file is still there; its children are reaped.",
    proofs: [
      {
        file: chaos,
        test: "answers what it promises through random SIGKILLs and SIGSTOPs of children and a SIGKILL of the daemon",
      },
      {
        file: autostart,
        test: "brings one daemon back for five agents although the dead one left its socket file",
      },
      { file: autostart, test: "lets `mcpool bridge` bring the daemon back the same way" },
    ],
  },
  {
    section: DAYS,
    promise:
      "Agents that start the daemon and call in the same breath → answered, never `unknown-tool`.",
    proofs: [
      {
        file: daemonHealing,
        test: "answers agents that call the instant the daemon serves, never unknown-tool",
      },
      {
        file: selfHealing,
        test: "answers a call made before the first reconcile has finished, instead of unknown-tool",
      },
    ],
  },
  {
    section: DAYS,
    promise: "`mcpool shutdown` or SIGTERM while calls run → each gets its answer first.",
    proofs: [
      {
        file: "test/integration/daemon-drain.test.ts",
        test: "answers each in-flight call, refuses new ones, then exits 0 with no child left",
      },
      {
        file: socketServer,
        test: "drains on close: a call in flight is answered before its connection ends",
      },
    ],
  },
  {
    section: DAYS,
    promise:
      "`mcp.json` replaced by a symlink loop, a dangling link, a directory, a FIFO, an unreadable or a huge file → a config error in status; nothing stops, nothing hangs.",
    proofs: [
      {
        file: "test/integration/config-paths.test.ts",
        test: "is a config error; the last good config keeps serving and shutdown completes",
      },
      {
        file: "test/integration/config-paths.test.ts",
        test: ": the daemon starts, serves and reports it; a good file then applies",
      },
      {
        file: "test/integration/config-paths.test.ts",
        test: "is a config error naming the permission; the last good config keeps serving",
      },
    ],
  },
  {
    section: DAYS,
    promise:
      "A server that prints junk (or its secrets) on stdout → nothing unredacted in the log, no log flood, no terminal escape codes.",
    proofs: [
      {
        file: "test/integration/junk-output.test.ts",
        test: "is logged tagged, redacted, printable and rate-limited, and calls still work",
      },
      {
        file: "test/unit/junk-log.test.ts",
        test: "logs at most maxLines per window per server, then one line counting the rest",
      },
    ],
  },
  {
    section: DAYS,
    promise:
      "`mcpool … | head`, `| wc -c`, `> file` → the whole output or a clean EPIPE; never a silently short result with exit 0.",
    proofs: [
      {
        file: "test/integration/cli-output.test.ts",
        test: "delivers a 300,000-character answer whole to `| wc -c`, and exits 0",
      },
      {
        file: "test/integration/cli-output.test.ts",
        test: "prints `tools --json` to a pipe exactly as to a file",
      },
      {
        file: "test/integration/cli-output.test.ts",
        test: "ends quietly with exit 141 when `| head` stops reading, without a stack trace",
      },
    ],
  },
  {
    section: DAYS,
    promise:
      "A timeout of 3,000,000,000 ms in the config → a validation error, not an instant timeout.",
    proofs: [
      {
        file: "test/integration/config-durations.test.ts",
        test: "is a problem in status for the pool section and for its row; other rows' calls run their course",
      },
      {
        file: "test/unit/validate.test.ts",
        test: "refuses a duration a timer cannot honour, saying the bounds: 3e9 ms would time out at once",
      },
    ],
  },
  {
    section: DAYS,
    promise:
      "A remote server that is down (connection refused) → the call fails with a pool error code naming the server and the cause, never the daemon's `internal error while handling tools/call`; when the server is back, the next call succeeds.",
    proofs: [
      {
        file: daemonHealing,
        test: "names the server and the cause when a remote is down, and calls it again once it is back",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "A `/tmp` or runtime-dir cleaner removes the socket, or the whole runtime folder → the daemon recreates them at once; no second daemon ever serves the same socket; `status` finds a live daemon whose socket is gone and says how to fix it.",
    proofs: [
      { file: keeping, test: "re-creates its socket when a cleaner removes it" },
      { file: keeping, test: "re-creates its whole runtime folder 0700 when it is removed" },
      {
        file: keeping,
        test: "keeps a second daemon away after its folder and lock file were removed",
      },
      { file: keeping, test: "has `status` name a live daemon whose socket is gone, with the fix" },
    ],
  },
  {
    section: WEEKS,
    promise:
      "A host holding the MCP sockets or the lean bridge is killed mid-call → the call is cancelled upstream at once.",
    proofs: [
      {
        file: "test/integration/host-cancel.test.ts",
        test: "host SIGKILLed mid-call through the %s entry cancels the call at once",
      },
      {
        file: "test/integration/host-cancel.test.ts",
        test: "a host holding the MCP socket itself that drops it mid-call cancels the call at once",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "A host that starts servers with a bare environment (no `XDG_RUNTIME_DIR`) → its entry reaches the user's daemon; no hidden second daemon with a second set of children.",
    proofs: [
      {
        file: "test/integration/socket-discovery.test.ts",
        test: "`mcpool bridge --server ID` with only PATH and HOME reaches the user's daemon, and starts none",
      },
      {
        file: "test/integration/wire-daemon-down.test.ts",
        test: "entry brings the user's daemon up on the same socket, and the call answers",
      },
    ],
  },
  {
    section: WEEKS,
    promise: "The config folder deleted and recreated → the new file is served without a reload.",
    proofs: [
      {
        file: "test/integration/config-watch.test.ts",
        test: "picks up a new mcp.json when the config folder is deleted and made again",
      },
      {
        file: "test/integration/config-watch.test.ts",
        test: "keeps picking up edits after a reload that followed the folder's deletion",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "A row whose id or slug would take another row's tool names (`a` beside `a__b`, twin slugs) → refused with a problem in `validate` and `status`; the serving server keeps its tools.",
    proofs: [
      {
        file: "test/integration/names-daemon.test.ts",
        test: "keeps a serving row's slug and every tool when a new row placed before it wants the slug",
      },
      {
        file: "test/integration/names-daemon.test.ts",
        test: "refuses an id holding `__`, so no server's tools can take another's names",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "A server that sends `tools/list_changed` after every listing → re-listed at a bounded rate, logged once per burst; no cache-save races.",
    proofs: [
      {
        file: "test/integration/relist-loop.test.ts",
        test: "is re-listed a bounded number of times, logged once, while the daemon stays responsive and no save races",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "A child's stderr holding newlines or something shaped like a log line → one escaped, tagged log line; nothing in the log that the daemon did not write.",
    proofs: [
      {
        file: "test/integration/daemon-log-integrity.test.ts",
        test: "shows a forged entry a child wrote to stderr as one escaped line tagged with that child's server",
      },
    ],
  },
  {
    section: WEEKS,
    promise: "A symlink planted at the log's path → not followed.",
    proofs: [
      {
        file: "test/integration/daemon-log-integrity.test.ts",
        test: "refuses a symlink planted at the log path, leaving its target untouched and saying why",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "The daemon auto-started by an agent → servers get the service's environment, not that agent's (no canary from agent A visible to agent B).",
    proofs: [
      {
        file: "test/integration/daemon-autostart-env.test.ts",
        test: "keeps the starting agent's own variables from every server, whatever command starts it",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "One process opening connections until the fd limit → refused cleanly at a documented cap; the CLI and existing clients keep working; memory returns.",
    proofs: [
      {
        file: "test/integration/daemon-connection-cap.test.ts",
        test: "refuses a connection over the cap with an error line, and lets the CLI and the clients in work",
      },
      {
        file: "test/integration/daemon-connection-cap.test.ts",
        test: "holds no connection of a flood once it has closed",
      },
      {
        file: "test/integration/daemon-connection-cap.test.ts",
        test: "caps connections at half the limit, so a flood meets a refusal, not EMFILE",
      },
    ],
    gap:
      "Memory returning is shown by the daemon holding no connection after the flood, not by " +
      "its RSS: a test would compare heap snapshots before and after a forced GC.",
  },
  {
    section: WEEKS,
    promise:
      "One process holding connections past hello, idle → held to its share of the cap (named with its pid and command in the refusal); the CLI and other agents get in; a full cap rejects an agent's connect() with the coded error, and the CLI says so under one prefix.",
    proofs: [
      {
        file: "test/integration/daemon-fair-share.test.ts",
        test: "is held to its share, named in the refusal, while the CLI and another agent get in",
      },
      {
        file: "test/integration/daemon-fair-share.test.ts",
        test: "refuses an agent's connect() with the coded error when the cap is full, and the CLI with one prefix",
      },
    ],
  },
  {
    section: IDENTITY,
    promise:
      "The state or data folder is a symlink → refused at start with a message naming the link, its target untouched; a folder of the user's keeps its mode.",
    proofs: [
      {
        file: "test/integration/daemon-links.test.ts",
        test: "refuses a state folder that is a symbolic link, naming it, and leaves where it points alone",
      },
      {
        file: "test/integration/daemon-links.test.ts",
        test: "refuses a data folder that is a symbolic link, naming it, and leaves where it points alone",
      },
      {
        file: "test/integration/daemon-links.test.ts",
        test: "uses state and data folders of the user's without changing their mode",
      },
    ],
  },
  {
    section: IDENTITY,
    promise:
      "A symlink planted at the log file's path → `mcpool logs` never reads through it, and `status` says the log is not written and why.",
    proofs: [
      {
        file: "test/integration/daemon-links.test.ts",
        test: "never shows through a link at the log's path, and status says the log is not written",
      },
    ],
  },
  {
    section: CONFIG,
    promise:
      "A config of many lazy rows none of which was ever called → each lazy row's tools learned once (started, listed, stopped) into the tools cache; `tools`, `search` and agents' catalogs show them with nothing running; a call starts the server.",
    proofs: [
      {
        file: "test/integration/lazy-discovery.test.ts",
        test: "learns every lazy row's tools once, shows them everywhere, stops them, and a call starts one",
      },
    ],
  },
  {
    section: CHILDREN,
    promise:
      'A server that never answers `initialize` → its first caller fails at the connect timeout (15 s by default) with an error naming `initialize`, not "failed recently"; status shows its pid and how long it has been starting; `shutdown` ends it within the drain.',
    proofs: [
      {
        file: "test/integration/daemon-starting.test.ts",
        test: "fails its first caller at the connect timeout, saying it did not answer initialize, and shows its pid meanwhile",
      },
      { file: "test/integration/daemon-starting.test.ts", test: "waits 15 s at most by default" },
      {
        file: "test/integration/daemon-starting.test.ts",
        test: "is ended by `mcpool shutdown` within the drain while it starts",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "The data or state folder full or read-only → shown in `status` with what it costs; no temp files left; calls keep working.",
    proofs: [
      {
        file: "test/integration/daemon-save-errors.test.ts",
        test: "shows each failed save with its folder and cost, keeps calling, and leaves no temp file",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "A server's child that leaves its process group (`setsid`) → still ended at shutdown, and by the next daemon when the first was killed.",
    proofs: [
      { file: "test/integration/daemon-escaped.test.ts", test: "is ended by `mcpool shutdown`" },
      {
        file: "test/integration/daemon-escaped.test.ts",
        test: "is ended by the next daemon when the one that started it was killed",
      },
    ],
  },
  {
    section: WEEKS,
    promise:
      "A daemon restart (upgrade, `systemctl --user restart`) under live host sessions → each host's next call answers; nothing to restart by hand.",
    proofs: [
      {
        file: "test/integration/session-restart.test.ts",
        test: "fails the call in flight with a coded error, and the next call answers; list_changed follows",
      },
      {
        file: "test/integration/session-restart.test.ts",
        test: "keeps the logging level the host set before the restart",
      },
      {
        file: "test/integration/session-restart.test.ts",
        test: "answers with an error naming mcpool and how to start it, and reconnects once it is back",
      },
    ],
  },
];
