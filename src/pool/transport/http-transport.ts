/**
 * An http row's transport: the SDK's StreamableHTTPClientTransport over the pinned,
 * keep-alive fetch, with the row's OAuth provider, the witness of its sign-in challenges,
 * what a modern request adds to its POST (modern-fetch.ts), and each answer measured
 * against the frame cap as it arrives (below). Loaded on demand through http-client.ts,
 * never imported statically by what a stdio-only daemon loads.
 */
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { HttpServerConfig } from "../../config/rows.js";
import { remoteUrlProblem } from "../../config/url-policy.js";
import { originPinnedFetch, sharedKeepAliveFetch, withBody } from "./fetch.js";
import { ListenStream } from "./listen-stream.js";
import { witnessChallenges } from "./challenges.js";
import { keepParamBook, modernFetch, ParamBook } from "./modern-fetch.js";
import { MAX_MESSAGE_BYTES, oversizeKind, tooLargeAnswer } from "./line-reader.js";
import { holdProvisionally } from "./session-end.js";
import type { FetchLike, HandedHttpSession, HandedSession, TransportContext } from "./transport.js";

/**
 * The SDK's transport with a close() that runs once. The SDK's says onclose on every call,
 * synchronously, and whoever learns of a close from onclose may close the transport in turn
 * (a lost connection's entry does, to take its leftovers down): without this the two
 * re-entered each other until the stack overflowed. stdio-transport.ts says its close once too.
 */
class OnceClosedHttpTransport extends StreamableHTTPClientTransport {
  #closed = false;
  /** A session another daemon handed over: the client resumes it instead of initializing. */
  handedSession?: HandedSession;
  /** The session's GET stream (listen-stream.ts), which a hand-over moves. */
  /** A handed session whose old daemon listened on its GET stream: listenAgain() opens it here. */
  listenedBefore = false;

  constructor(
    readonly listening: ListenStream,
    ...rest: ConstructorParameters<typeof StreamableHTTPClientTransport>
  ) {
    super(...rest);
  }

  /**
   * Opens the GET stream of a handed session again, once its old daemon has closed its own,
   * or after a hand-over that failed; a 409 (the server has not yet seen the old stream's
   * close) is tried again on the SDK's reconnection schedule.
   */
  listenAgain(): void {
    this.listening.resume();
    if (!this.listenedBefore || this.#closed) return;
    this.listenedBefore = false;
    // The SDK opens its GET stream only after `notifications/initialized`, which a handed
    // session never sends again; these are its own steps for opening and reopening it.
    const sdk = this as unknown as {
      _startOrAuthSse(options: { resumptionToken?: string }): Promise<void>;
      _scheduleReconnection(options: { resumptionToken?: string }, attempt: number): void;
    };
    sdk._startOrAuthSse({}).catch((error: unknown) => {
      if (httpErrorStatus(error) === 409 && !this.#closed) sdk._scheduleReconnection({}, 0);
    });
  }

  override async close(): Promise<void> {
    // Set before the SDK's close: its onclose runs inside, and may call this again.
    if (this.#closed) return;
    this.#closed = true;
    await super.close();
  }
}

/**
 * `row` has its placeholders filled already (transport.ts). With `handed`, the transport goes
 * on in that session (src/daemon/handover/README.md): its requests carry its id.
 */
export function createHttpTransport(
  row: HttpServerConfig,
  context: TransportContext,
  handed?: HandedHttpSession,
): StreamableHTTPClientTransport {
  // The policy again on what the placeholders made of the url.
  const problem = remoteUrlProblem(row.url);
  if (problem !== undefined) throw new Error(problem);
  const url = new URL(row.url);
  const headers = { ...row.headers };
  const authProvider = context.authProvider?.(row);
  const onChallenge = context.onAuthChallenge;
  const pinned = originPinnedFetch(
    url,
    Object.keys(headers),
    context.fetch ?? sharedKeepAliveFetch(),
  );
  // What its tools mark for Mcp-Param-* headers, learnt by the client's listings.
  const book = new ParamBook();
  const witnessed =
    authProvider && onChallenge
      ? witnessChallenges(pinned, url, (challenge) => onChallenge(row.id, challenge))
      : pinned;
  const capped = cappedFetch(witnessed, MAX_MESSAGE_BYTES, (note) =>
    context.onJunk?.(row.id, note, (text) => text),
  );
  const listening = new ListenStream();
  const transport = new OnceClosedHttpTransport(listening, url, {
    requestInit: { headers },
    ...(authProvider ? { authProvider } : {}),
    // Redirects are the pinned fetch's to follow: it drops secrets on a hop off the origin.
    redirectPolicy: "follow",
    ...(handed ? { sessionId: handed.sessionId } : {}),
    // A modern request's headers and in-band errors (modern-fetch.ts); a legacy one passes.
    fetch: listening.wrap(modernFetch(capped, book)),
  });
  keepParamBook(transport, book);
  unmarkAnswers(transport);
  if (handed) {
    transport.handedSession = handed.session;
    transport.listenedBefore = handed.listened === true;
    if (handed.owned) holdProvisionally(transport, handed.owned);
  }
  return transport;
}

/**
 * The transport's onmessage, whoever sets it, handed a refused oversize answer as the
 * pool's own error (its data an AnswerTooLarge, which JSON cannot carry).
 */
function unmarkAnswers(transport: StreamableHTTPClientTransport): void {
  let handler: StreamableHTTPClientTransport["onmessage"];
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => handler,
    set: (next: StreamableHTTPClientTransport["onmessage"]) => {
      handler = next && ((message: JSONRPCMessage) => next(unmarkTooLarge(message)));
    },
  });
}

export function httpErrorStatus(error: unknown): number | undefined {
  return error instanceof StreamableHTTPError ? error.code : undefined;
}

export function isHttpTransport(transport: unknown): boolean {
  return transport instanceof StreamableHTTPClientTransport;
}

/** Ends `transport`'s GET stream for a hand-over (listen-stream.ts): true if one was open. */
export function holdListening(transport: unknown): Promise<boolean> {
  if (!(transport instanceof OnceClosedHttpTransport)) return Promise.resolve(false);
  return transport.listening.hold();
}

/**
 * Lets `transport` open its GET stream again: at once if `reopen` (a hand-over that failed,
 * of a session that listened), else when its own handed session says so (listenAgain()).
 */
export function listenAgain(transport: unknown, reopen?: boolean): void {
  if (!(transport instanceof OnceClosedHttpTransport)) return;
  if (reopen !== undefined) transport.listenedBefore = reopen;
  transport.listenAgain();
}

// ── An answer over the frame cap ──

/*
 * An http row's answer over the frame cap, refused as it arrives. The SDK's Streamable
 * HTTP transport reads a JSON body whole, and one server-sent event whole, before anything
 * could refuse it. This fetch wrapper measures each message as its bytes come in: a JSON
 * body, or one SSE event (events end at a blank line), that passes the cap is counted and
 * dropped, only its first and last bytes kept to find its JSON-RPC id (line-reader.ts
 * reads them, as for a stdio line over the cap). In its place the SDK reads the error
 * answer the stdio path gives for that id, so the caller is refused at once and the
 * session reads on. A body whose Content-Length is over the cap is not read at all: the
 * request the fetch sent names the id. An oversize request or notification of the
 * server's is dropped and told to `onDropped`.
 */
/** Bytes kept of a dropped message's start and end, to read its id. */
const KEEP_BYTES = 512;

/** Names the replacement answer's data: no server knows this process's token. */
const MARK = "mcpool/answerTooLarge";
const TOKEN = randomUUID();

/**
 * What the stream held, for tests: the most bytes it held at once, a dropped message's kept
 * ends counted by the memory they keep alive.
 */
export interface CapStats {
  maxHeldBytes: number;
}

/**
 * `fetch` whose JSON and SSE bodies never hold a message over `maxBytes`. `onDropped` is
 * told of each oversize message that was no answer (a server's request or notification).
 */
export function cappedFetch(
  fetch: FetchLike,
  maxBytes: number,
  onDropped: (note: string) => void,
): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    return cappedResponse(response, requestIdOf(init?.body), maxBytes, onDropped);
  };
}

/** The response with its body measured; other content types pass untouched. */
export function cappedResponse(
  response: Response,
  requestId: RequestId | undefined,
  maxBytes: number,
  onDropped: (note: string) => void,
  stats?: CapStats,
): Response {
  const type = response.headers.get("content-type") ?? "";
  const body = response.body;
  if (body === null) return response;
  const json = type.includes("application/json");
  if (!json && !type.includes("text/event-stream")) return response;
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (json && requestId !== undefined && declared > maxBytes) {
    void body.cancel().catch(() => undefined);
    return withBody(response, bytesOf(replacement(requestId, declared, maxBytes)));
  }
  const meter = json
    ? new JsonMeter(maxBytes, requestId, stats)
    : new EventMeter(maxBytes, onDropped, stats);
  const reader = body.getReader();
  const measured = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        const out = done ? meter.end() : meter.push(value);
        for (const bytes of out) controller.enqueue(bytes);
        if (done) return controller.close();
        if (out.length > 0) return;
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return withBody(response, measured);
}

/**
 * The answer as the pool's error: the replacement's data, marked by this process, becomes
 * the AnswerTooLarge the stdio path gives; any other message passes as it is.
 */
export function unmarkTooLarge(message: JSONRPCMessage): JSONRPCMessage {
  const error = (message as { error?: { data?: Record<string, unknown> } }).error;
  const data = error?.data;
  if (typeof data !== "object" || data === null || data[MARK] !== TOKEN) return message;
  const id = (message as { id: RequestId }).id;
  return tooLargeAnswer(id, Number(data.bytes), Number(data.maxBytes));
}

/** The error answer standing for an oversize answer, as JSON text, marked as ours. */
function replacement(id: RequestId, bytes: number, maxBytes: number): string {
  const answer = tooLargeAnswer(id, bytes, maxBytes) as { error: { data: object } };
  answer.error.data = { bytes, maxBytes, [MARK]: TOKEN };
  return JSON.stringify(answer);
}

/** The id of the one JSON-RPC request a POST body carries; undefined for anything else. */
function requestIdOf(body: unknown): RequestId | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

const bytesOf = (text: string): Uint8Array => Buffer.from(text, "utf8");

/** One message being measured: held while under the cap, else counted with its ends kept. */
class Message {
  #held: Uint8Array[] = [];
  #heldBytes = 0;
  /** Bytes counted so far. */
  bytes = 0;
  #head: Uint8Array | undefined;
  #tail = new Uint8Array(0);

  constructor(
    readonly maxBytes: number,
    readonly stats: CapStats | undefined,
  ) {}

  get dropping(): boolean {
    return this.#head !== undefined;
  }

  add(bytes: Uint8Array): void {
    this.bytes += bytes.length;
    if (this.#head === undefined && this.bytes <= this.maxBytes) {
      this.#held.push(bytes);
      this.#heldBytes += bytes.length;
      if (this.stats) this.stats.maxHeldBytes = Math.max(this.stats.maxHeldBytes, this.#heldBytes);
      return;
    }
    if (this.#head === undefined) {
      const all = Buffer.concat([...this.#held, bytes]);
      // A copy: a view would keep all of `all` alive while the message streams on.
      this.#head = Buffer.from(all.subarray(0, KEEP_BYTES));
      this.#held = [];
      this.#heldBytes = 0;
      bytes = all;
    }
    const joined = Buffer.concat([this.#tail, bytes.subarray(-KEEP_BYTES)]);
    this.#tail = joined.subarray(-KEEP_BYTES);
    if (this.stats) {
      const kept = this.#head.buffer.byteLength + this.#tail.buffer.byteLength;
      this.stats.maxHeldBytes = Math.max(this.stats.maxHeldBytes, kept);
    }
  }

  /** The whole message; only while not dropping. */
  whole(): Uint8Array {
    return Buffer.concat(this.#held);
  }

  ends(): { head: Uint8Array; tail: Uint8Array } {
    return { head: this.#head ?? new Uint8Array(0), tail: this.#tail };
  }
}

/** A JSON body: one message, the answer to the request sent. */
class JsonMeter {
  readonly #message: Message;

  constructor(
    maxBytes: number,
    readonly requestId: RequestId | undefined,
    stats: CapStats | undefined,
  ) {
    this.#message = new Message(maxBytes, stats);
  }

  push(chunk: Uint8Array): Uint8Array[] {
    this.#message.add(chunk);
    return [];
  }

  end(): Uint8Array[] {
    const message = this.#message;
    if (!message.dropping) return [message.whole()];
    const { head, tail } = message.ends();
    const what = oversizeKind(head, tail);
    const id = what.kind === "answer" ? what.id : this.requestId;
    if (id === undefined) {
      throw new Error(
        `a ${message.bytes}-byte JSON body passed the ${message.maxBytes}-byte cap and names no request`,
      );
    }
    return [bytesOf(replacement(id, message.bytes, message.maxBytes))];
  }
}

const LF = 0x0a;
const CR = 0x0d;

/** A server-sent event stream: each event measured on its own, up to its blank line. */
class EventMeter {
  #event: Message;
  /** The line being read is empty so far: a line end now ends the event. */
  #atLineStart = true;
  #afterCR = false;

  constructor(
    readonly maxBytes: number,
    readonly onDropped: (note: string) => void,
    readonly stats: CapStats | undefined,
  ) {
    this.#event = new Message(maxBytes, stats);
  }

  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let from = 0;
    for (let at = 0; at < chunk.length; at++) {
      const byte = chunk[at]!;
      if (byte === LF && this.#afterCR) {
        this.#afterCR = false;
        continue;
      }
      this.#afterCR = byte === CR;
      if (byte !== LF && byte !== CR) {
        this.#atLineStart = false;
        continue;
      }
      if (!this.#atLineStart) {
        this.#atLineStart = true;
        continue;
      }
      // A blank line: the event ends with this byte (and its LF, when this is a CR).
      let end = at + 1;
      if (byte === CR && chunk[end] === LF) {
        end++;
        at++;
        this.#afterCR = false;
      }
      this.#event.add(chunk.subarray(from, end));
      out.push(...this.#finish());
      from = end;
    }
    if (from < chunk.length) this.#event.add(chunk.subarray(from));
    return out;
  }

  end(): Uint8Array[] {
    return this.#event.bytes > 0 ? this.#finish() : [];
  }

  #finish(): Uint8Array[] {
    const event = this.#event;
    this.#event = new Message(this.maxBytes, this.stats);
    if (!event.dropping) return [event.whole()];
    const { head, tail } = event.ends();
    const what = oversizeKind(dataOf(head), trimmed(tail));
    if (what.kind === "answer") {
      return [
        bytesOf(`event: message\ndata: ${replacement(what.id, event.bytes, this.maxBytes)}\n\n`),
      ];
    }
    const name = what.kind === "message" ? `"${what.method}" message` : "server-sent event";
    this.onDropped(
      `[a ${event.bytes}-byte ${name}, over the ${this.maxBytes}-byte cap, dropped unread]`,
    );
    return [];
  }
}

/** The first data field's value, from an event's first bytes. */
function dataOf(head: Uint8Array): Uint8Array {
  const text = Buffer.from(head).toString("latin1");
  const match = /(?:^|[\r\n])data: ?/.exec(text);
  return match ? head.subarray(match.index + match[0].length) : new Uint8Array(0);
}

/** The bytes without the line ends that close an event. */
function trimmed(tail: Uint8Array): Uint8Array {
  let end = tail.length;
  while (end > 0 && (tail[end - 1] === LF || tail[end - 1] === CR)) end--;
  return tail.subarray(0, end);
}
