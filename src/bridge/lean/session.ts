/**
 * The lean bridge's host session across daemon restarts. The
 * daemon's MCP socket holds one MCP session per connection; a daemon that restarts (upgrade,
 * `mcpool shutdown` + start, a service restart) closes it. The session is the host's, so
 * this side keeps what it had and gives it to the next daemon:
 *
 * - the host's lines are read whole (one JSON-RPC message a line, MCP stdio), and what makes its
 *   session — `initialize`, `notifications/initialized`, the last `logging/setLevel`, the
 *   `resources/subscribe`s not undone, a modern host's open `subscriptions/listen` streams — is
 *   kept; every request sent and not yet answered too;
 * - the daemon's connection closing with the host still there: each request in flight is answered
 *   at once with INFLIGHT_MESSAGE (it may or may not have run) — a listen stream is not: it stays
 *   open for the host — and the socket is dialled again, RECONNECT_DELAYS_MS apart, within the
 *   window (reconnectWindowMs); the host's requests meanwhile wait;
 * - each connection opens with the host's name, the same on every one (host-signals.ts);
 * - connected again: `initialize` is sent again as the host sent it, then (after its answer)
 *   `notifications/initialized`, the level and the subscriptions; their answers are the host's
 *   already and are dropped; the host is told its tools list changed (the new daemon's catalog may
 *   differ), in its era (host-era.ts): unsolicited to a legacy host, on each listen stream that
 *   took tool changes to a 2026-07-28 one; each open listen stream is sent again as it was (same
 *   id, so what the new daemon sends on it reaches the host's stream; its acknowledgement, the
 *   host's already, is dropped), and then what it asked meanwhile;
 * - the window over: what waits, and every request after, is answered with downMessage() (mcpool,
 *   the socket, how to start it), and the socket is dialled every DOWN_RETRY_MS, as long as the
 *   host is there: a daemon that comes back gets the session as above;
 * - a cold start (no daemon yet, one starting: `options.cold`) begins as a loss does, but the
 *   host's opening and listings are answered from what the daemon answered them before
 *   (cold-answers.ts); once it is reached, no list change is said unless the listings, asked again,
 *   differ, and then in the host's era (host-era.ts).
 *
 * Node's net alone, as the lean bridge: no SDK, no client.
 */
import { connect, Socket } from "node:net";
import { answerWithId, listKindOf, type ColdAnswers } from "./cold-answers.js";
import { HostEra, SUBSCRIPTION_ID_KEY } from "./host-era.js";
import { hostNameLine } from "./host-signals.js";

/** How long the host's requests wait for a daemon that went away, ms, from the loss. */
export const RECONNECT_WINDOW_MS = 60_000;

/**
 * The window an entry uses: `MCPOOL_RECONNECT_MS` from its environment when that is a whole
 * number of ms (0: requests are refused at once while the daemon is away), else
 * RECONNECT_WINDOW_MS. The perl relay reads the same variable.
 */
export function reconnectWindowMs(env: NodeJS.ProcessEnv): number {
  const value = env.MCPOOL_RECONNECT_MS;
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : RECONNECT_WINDOW_MS;
}
/** Pauses between redials within the window, ms; the last repeats. A service is back in ~1 s. */
export const RECONNECT_DELAYS_MS = [100, 200, 400, 800, 1_600, 2_000] as const;
/** Pause between redials after the window, ms: cheap, and a daemon back later is found. */
export const DOWN_RETRY_MS = 5_000;
/** Bound on the new daemon's answers to the replayed session, ms; else the dial is redone. */
export const REPLAY_TIMEOUT_MS = 15_000;

/** What a request in flight when the daemon went away is answered (JSON-RPC internal error). */
export const INFLIGHT_MESSAGE =
  "mcpool: the daemon went away during this request (it restarted or stopped); the request may or may not have run. This entry reconnects by itself: send it again.";

/** How a user starts the daemon, in every message that says it is not there. */
export const START_DAEMON =
  "start it with `mcpool service install` (now and at every login) or `mcpool serve`";

/** What a request is answered when no daemon came back within the window. */
export function downMessage(socketPath: string): string {
  return (
    `mcpool: no daemon answers at ${socketPath} (it stopped or is restarting); ` +
    `${START_DAEMON}. This entry reconnects by itself once it is back.`
  );
}

const INTERNAL_ERROR = -32603;

type Id = string | number;

interface Message {
  id?: Id;
  method?: string;
  params?: { uri?: unknown; requestId?: unknown; _meta?: Record<string, unknown> };
}

function parse(line: string): Message | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Message)
      : undefined;
  } catch {
    return undefined;
  }
}

const isId = (id: unknown): id is Id => typeof id === "string" || typeof id === "number";

/** Whether a host line is a request: it waits for an answer. */
const isRequest = (line: string): boolean => {
  const message = parse(line);
  return message?.method !== undefined && isId(message.id);
};

/** The key of a framed request's id. */
const idOf = (line: string): string => JSON.stringify(parse(line)?.id);

/** The error answer to request `id`, framed. */
function errorLine(id: Id, message: string, inFlight: boolean): string {
  const data = { code: "daemon-unavailable", detail: inFlight ? { inFlight: true } : {} };
  return `${JSON.stringify({ jsonrpc: "2.0", id, error: { code: INTERNAL_ERROR, message, data } })}\n`;
}

/** Splits a stream's text into whole lines; `onLine` gets each with its "\n". */
function lines(onLine: (line: string) => void): (chunk: string) => void {
  let rest = "";
  return (chunk) => {
    rest += chunk;
    let from = 0;
    let at = rest.indexOf("\n");
    while (at !== -1) {
      onLine(rest.slice(from, at + 1));
      from = at + 1;
      at = rest.indexOf("\n", from);
    }
    rest = rest.slice(from);
  };
}

export interface LeanSessionOptions {
  /** The MCP socket, dialled again after a loss. */
  path: string;
  /** The daemon's socket, named to the host when it does not come back. */
  daemonSocket: string;
  /** The host's lines: paused while the daemon is slow to take them. */
  input: NodeJS.ReadableStream;
  /** How long the host's requests wait for a daemon that went away, ms (reconnectWindowMs). */
  windowMs: number;
  /** Where the daemon's lines go: the host. */
  out: NodeJS.WritableStream;
  /** Everything is over: the host has had all it will get. */
  done(): void;
  /**
   * A cold start (cold-answers.ts): no daemon yet, one starting; the host's opening and
   * listings are answered from what the daemon last answered them while it is dialled.
   */
  cold?: ColdAnswers;
  /** The host's name, made once, the first line of every connection (hostNameLine()). */
  hostName?: string;
}

type State = "open" | "replaying" | "reconnecting" | "down";

/** One host session over successive connections to the daemon's MCP socket. */
export class LeanSession {
  private socket: Socket;
  private state: State = "open";
  /** What a request is answered while "down": why the daemon could not be reached. */
  private downWith = "";
  /** What makes the host's session, sent again to a new daemon. */
  private initialize: string | undefined;
  private initialized: string | undefined;
  private level: string | undefined;
  private readonly subscriptions = new Map<string, string>();
  /** The host's open `subscriptions/listen` requests, by JSON of their id: kept across a loss. */
  private readonly listens = new Map<string, string>();
  /** Listens sent again to a new daemon whose acknowledgement is still to come (and to drop). */
  private readonly relistened = new Set<string>();
  /** The host's requests on the current connection not answered yet, by JSON of their id. */
  private readonly pending = new Map<string, Id>();
  /** The host's lines that wait for a connection. */
  private queue: string[] = [];
  /** Replayed requests whose answers are still to come (and to drop). */
  private replaying = new Set<string>();
  private phase: "initialize" | "rest" = "initialize";
  private lostAt = 0;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The cold start's answers, until the daemon is first reached. */
  private cold: ColdAnswers | undefined;
  /** Listings answered from the recording: asked again of the daemon once it is reached. */
  private readonly coldListed: { line: string; id: Id; method: string; answer: string }[] = [];
  /** Those asked again and not answered yet, by JSON of the id they were sent with. */
  private readonly checking = new Map<string, { id: Id; method: string; answer: string }>();
  /** The list changes told the host after those checks: each kind once. */
  private readonly told = new Set<string>();
  /** The host's era and listen subscriptions: how a list change is said to it. */
  private readonly era = new HostEra();
  /** The host closed its stdin (a half-close) or is gone: nothing more comes from it. */
  private hostEnded = false;
  private finished = false;
  /** A dial is under way. */
  private dialing = false;

  /** `socket`: the daemon's MCP socket, connected; undefined for a cold start (`options.cold`). */
  constructor(
    socket: Socket | undefined,
    private readonly options: LeanSessionOptions,
  ) {
    this.cold = options.cold;
    if (socket !== undefined) {
      this.socket = socket;
      this.attach(socket);
      return;
    }
    // Nothing to write to until the daemon answers: the host's lines wait, or are answered cold.
    this.socket = new Socket();
    this.state = "reconnecting";
    this.lostAt = Date.now();
    this.redial();
  }

  /** The daemon answers on its own socket now: its MCP socket is dialled at once. */
  daemonStarted(): void {
    if (this.state !== "reconnecting" || this.dialing) return;
    clearTimeout(this.timer);
    this.attempt = 0;
    this.redial();
  }

  /** The daemon cannot be started: what waits, and every request until one is there, get `message`. */
  daemonFailed(message: string): void {
    if (this.state !== "reconnecting") return;
    clearTimeout(this.timer);
    this.giveUp(message);
    this.redialLater();
  }

  /** The socket of the moment, for the host's end (HOST_GONE, half-close). */
  get current(): Socket | undefined {
    return this.state === "open" || this.state === "replaying" ? this.socket : undefined;
  }

  /** Host text, as it arrives. */
  readonly fromHost = lines((line) => this.hostLine(line));

  /** Stdin ended: the daemon gets a half-close once what waits is sent. */
  hostEnd(): void {
    this.hostEnded = true;
    if (this.state === "open") this.socket.end();
    // Nothing waiting is owed an answer (a cold start's `notifications/initialized`): done.
    else if (this.state === "down" || !this.queue.some(isRequest)) this.finish();
  }

  /** The host is gone: no more dials; the caller ends the current socket. */
  stop(): void {
    this.hostEnded = true;
    this.finished = true;
    clearTimeout(this.timer);
  }

  private hostLine(line: string): void {
    const message = parse(line);
    if (message !== undefined) this.era.fromHost(message);
    if (this.state === "open") return this.send(line);
    const local = this.state === "reconnecting" ? this.cold?.answer(line) : undefined;
    if (local !== undefined) return this.answeredCold(line, local);
    if (this.state === "down") {
      if (message?.method !== undefined && isId(message.id)) {
        this.write(errorLine(message.id, this.downWith, false));
      }
      return;
    }
    this.queue.push(line);
  }

  /** A host line answered from the recording: the opening is replayed, a listing checked. */
  private answeredCold(line: string, local: { method: string; answer: string }): void {
    const id = parse(line)?.id;
    // The recorded answer is the daemon's: the session's era follows it as it would the daemon.
    const answer = parse(local.answer);
    if (answer !== undefined) this.era.fromDaemon(answer);
    if (local.method === "initialize" || local.method === "server/discover") this.initialize = line;
    else if (isId(id))
      this.coldListed.push({ line, id, method: local.method, answer: local.answer });
    this.write(local.answer);
  }

  /**
   * The daemon reached after a cold start: each listing the host was answered from the
   * recording is asked again; where the daemon's answer differs, the host is told the list
   * changed, as the daemon tells a host whose listing it learnt better since.
   */
  private checkCold(): void {
    this.cold = undefined;
    for (const [n, listed] of this.coldListed.entries()) {
      const request = JSON.parse(listed.line) as Record<string, unknown>;
      request.id = `mcpool-cold-${n}`;
      this.checking.set(JSON.stringify(request.id), listed);
      this.socket.write(`${JSON.stringify(request)}\n`);
    }
    this.coldListed.length = 0;
  }

  /** The daemon's answer to a listing asked again: the host hears of a difference. */
  private checked(line: string, listed: { id: Id; method: string; answer: string }): void {
    const kind = listKindOf(listed.method);
    if (answerWithId(line, listed.id) === listed.answer || this.told.has(kind)) return;
    this.told.add(kind);
    for (const notice of this.era.listChanged(kind)) this.write(notice);
  }

  /** A host line to the daemon, noting what the session is made of and what awaits answers. */
  private send(line: string): void {
    const message = parse(line);
    if (message?.method !== undefined) {
      const { method } = message;
      if (method === "initialize") this.initialize = line;
      else if (method === "notifications/initialized") this.initialized = line;
      else if (method === "logging/setLevel") this.level = line;
      else if (method === "resources/subscribe" || method === "resources/unsubscribe") {
        const uri = JSON.stringify(message.params?.uri);
        if (method === "resources/subscribe") this.subscriptions.set(uri, line);
        else this.subscriptions.delete(uri);
      } else if (method === "notifications/cancelled") {
        this.listens.delete(JSON.stringify(message.params?.requestId));
      }
      if (method === "subscriptions/listen" && isId(message.id)) {
        this.listens.set(JSON.stringify(message.id), line);
      } else if (isId(message.id)) this.pending.set(JSON.stringify(message.id), message.id);
    }
    if (!this.socket.write(line)) {
      this.options.input.pause();
      this.socket.once("drain", () => this.options.input.resume());
    }
  }

  private write(line: string): void {
    if (this.options.out.write(line)) return;
    this.socket.pause();
    this.options.out.once("drain", () => this.socket.resume());
  }

  private attach(socket: Socket): void {
    // A connection's first line names the host (host-signals.ts), when it has a name.
    if (this.options.hostName !== undefined) socket.write(hostNameLine(this.options.hostName));
    socket.setEncoding("utf8");
    socket.on(
      "data",
      lines((line) => this.daemonLine(line)),
    );
    socket.on("error", () => undefined);
    socket.once("close", () => this.lost(socket));
  }

  private daemonLine(line: string): void {
    const message = parse(line);
    if (message !== undefined) this.era.fromDaemon(message);
    const answer = message !== undefined && message.method === undefined && isId(message.id);
    const key = answer ? JSON.stringify(message.id) : undefined;
    const listed = key !== undefined ? this.checking.get(key) : undefined;
    if (listed !== undefined) {
      this.checking.delete(key!);
      return this.checked(line, listed);
    }
    if (key !== undefined && this.state === "replaying" && this.replaying.delete(key)) {
      this.replayed();
      return;
    }
    if (key !== undefined) {
      this.pending.delete(key);
      // A listen stream's answer is its end.
      this.listens.delete(key);
      this.relistened.delete(key);
    }
    if (message?.method === "notifications/subscriptions/acknowledged") {
      const stream = JSON.stringify(message.params?._meta?.[SUBSCRIPTION_ID_KEY]);
      if (this.relistened.delete(stream)) return;
    }
    this.write(line);
  }

  private lost(socket: Socket): void {
    if (socket !== this.socket || this.finished) return;
    // Paused for a socket that will never drain: the host's lines now wait in the queue.
    this.options.input.resume();
    for (const id of this.pending.values()) this.write(errorLine(id, INFLIGHT_MESSAGE, true));
    this.pending.clear();
    this.checking.clear();
    this.relistened.clear();
    clearTimeout(this.timer);
    // The daemon ended a session the host is done with: that is the end.
    if (this.hostEnded && (this.state === "open" || this.queue.length === 0)) return this.finish();
    if (this.state === "open") {
      this.lostAt = Date.now();
      this.attempt = 0;
    }
    if (this.state !== "down") this.state = "reconnecting";
    this.redialLater();
  }

  private redialLater(): void {
    const inWindow = Date.now() - this.lostAt < this.options.windowMs;
    if (!inWindow && this.state === "reconnecting") this.giveUp();
    const delay = inWindow
      ? (RECONNECT_DELAYS_MS[this.attempt] ?? RECONNECT_DELAYS_MS.at(-1)!)
      : DOWN_RETRY_MS;
    this.attempt += 1;
    this.timer = setTimeout(() => this.redial(), delay);
  }

  /** The window is over: what waits is answered, and so is every request until a daemon is back. */
  private giveUp(message = downMessage(this.options.daemonSocket)): void {
    this.state = "down";
    this.downWith = message;
    this.cold = undefined;
    for (const line of this.queue) {
      const request = parse(line);
      if (request?.method !== undefined && isId(request.id)) {
        this.write(errorLine(request.id, message, false));
      }
    }
    this.queue = [];
    // Its listen streams end: nothing will be heard on them until the host listens again.
    for (const line of this.listens.values()) {
      const id = parse(line)?.id;
      if (!isId(id)) continue;
      this.era.listenEnded(id);
      this.write(errorLine(id, message, false));
    }
    this.listens.clear();
    if (this.hostEnded) this.finish();
  }

  private redial(): void {
    if (this.finished) return;
    this.dialing = true;
    const socket = connect(this.options.path);
    const failed = (): void => {
      this.dialing = false;
      socket.destroy();
      this.redialLater();
    };
    socket.once("error", failed);
    socket.once("connect", () => {
      this.dialing = false;
      socket.off("error", failed);
      this.socket = socket;
      this.attach(socket);
      this.replay();
    });
  }

  /** A new connection: the host's session first, its waiting lines after. */
  private replay(): void {
    if (this.initialize === undefined) return this.opened(false);
    this.state = "replaying";
    this.phase = "initialize";
    this.replaying = new Set([idOf(this.initialize)]);
    this.socket.write(this.initialize);
    // A daemon that does not answer is no daemon: drop it and dial again.
    this.timer = setTimeout(() => this.socket.destroy(), REPLAY_TIMEOUT_MS);
  }

  /** A replayed answer was dropped: after initialize's, the rest of the session goes. */
  private replayed(): void {
    if (this.replaying.size > 0) return;
    if (this.phase === "initialize") {
      this.phase = "rest";
      if (this.initialized !== undefined) this.socket.write(this.initialized);
      const rest = [this.level, ...this.subscriptions.values()].filter((l) => l !== undefined);
      if (rest.length > 0) {
        this.replaying = new Set(rest.map(idOf));
        for (const line of rest) this.socket.write(line);
        return;
      }
    }
    this.opened(true);
  }

  private opened(restored: boolean): void {
    clearTimeout(this.timer);
    this.state = "open";
    this.attempt = 0;
    const cold = this.cold !== undefined;
    // The new daemon's tools may differ: said in the host's era, to a host that had opened
    // (one whose discovery was refused too: direct, it is told unsolicited of a change).
    if (!cold && (restored || this.era.isModern || this.era.isDecided)) {
      for (const notice of this.era.listChanged("tools")) this.write(notice);
    }
    for (const [key, line] of this.listens) {
      this.relistened.add(key);
      this.socket.write(line);
    }
    const waiting = this.queue;
    this.queue = [];
    for (const line of waiting) this.send(line);
    if (cold) this.checkCold();
    if (this.hostEnded) this.socket.end();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.options.done();
  }
}
