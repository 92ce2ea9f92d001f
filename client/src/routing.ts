/**
 * What flows back to an agent while its calls run: progress notifications,
 * matched to the call by the token this client chose for it, and the daemon's `elicit`
 * requests, answered by the handler given to that call, else the one given to onElicit(),
 * else declined. The daemon sends a connection only what its own calls caused, so two
 * agents using the same request ids never see each other's traffic.
 */
import {
  type Caller,
  type CreateMessageRequestParams,
  type CreateMessageResult,
  type ElicitParams,
  type ElicitRequestParams,
  type ElicitResult,
  type HostProfile,
  McpPoolError,
  type Progress,
  type ProgressToken,
  type RootsParams,
  type RootsResult,
  type SampleParams,
} from "mcpool-protocol";

export interface ElicitHandlerContext {
  /** The pooled server that asks. */
  serverId: string;
  /** Aborted when the answer is no longer wanted: the call ended or the server withdrew. */
  signal: AbortSignal;
}

/**
 * Answers a pooled server's question: `accept` with `content` matching the form's
 * `requestedSchema`, or `decline` / `cancel`. One that throws is answered `cancel`.
 */
export type ElicitHandler = (
  params: ElicitRequestParams,
  context: ElicitHandlerContext,
) => ElicitResult | Promise<ElicitResult>;

/** The pooled server that asks for a completion, and when the answer is no longer wanted. */
export type SampleHandlerContext = ElicitHandlerContext;

/**
 * Answers a pooled server's sampling request with the model's message (`role`, `content`,
 * `model`). One that throws reaches the server as a JSON-RPC error.
 */
export type SampleHandler = (
  params: CreateMessageRequestParams,
  context: SampleHandlerContext,
) => CreateMessageResult | Promise<CreateMessageResult>;

/**
 * Answers a pooled server's `roots/list` asked inside a call (a modern server's input
 * request) with the caller's roots. One that throws reaches the server as a JSON-RPC error.
 */
export type RootsHandler = (
  params: Record<string, unknown>,
  context: ElicitHandlerContext,
) => RootsResult | Promise<RootsResult>;

export type ProgressListener = (progress: Progress) => void;

/** Options of the passthrough methods. */
export interface PassthroughOptions {
  /** Aborting cancels the request at the daemon and upstream; it rejects with the reason. */
  signal?: AbortSignal;
  /**
   * The calling host's capabilities and roots, as given to tools() and call(): the request
   * goes to the connection that host's calls go to (its own child, when it has one), so it
   * lists what those calls made (a resource a call added), and completes as they would.
   */
  profile?: HostProfile;
}

/**
 * Options of a passthrough request a modern server may ask inside (`prompts/get`,
 * `resources/read`): its questions go to these handlers, as a call's do.
 */
export interface AskingOptions extends PassthroughOptions {
  onElicit?: ElicitHandler;
  onSample?: SampleHandler;
  onRoots?: RootsHandler;
  /** The calling agent's client info and log level, for a modern server's envelope. */
  caller?: Caller;
}

/** One call's routes while it is in flight. */
export interface CallRoute {
  /** What the call's params carry so the daemon routes back to it. */
  readonly params: {
    progressToken?: ProgressToken;
    elicit?: boolean;
    sample?: boolean;
    roots?: boolean;
  };
  /** The call went out under this JSON-RPC id. */
  sent(id: number): void;
  /** The call settled: nothing more comes back to it. */
  close(): void;
}

const DECLINE: ElicitResult = { action: "decline" };

/** The route of a call that brought no handler: nothing comes back to it but its answer. */
const NO_ROUTE: CallRoute = Object.freeze({
  params: Object.freeze({}),
  sent: () => undefined,
  close: () => undefined,
});

export class CallRouting {
  /** The handler of onElicit(), for calls that brought none of their own. */
  handler: ElicitHandler | undefined;
  /** The handler of onSample(), for calls that brought none of their own. */
  sampler: SampleHandler | undefined;
  #lastToken = 0;
  readonly #progress = new Map<ProgressToken, ProgressListener>();
  readonly #elicit = new Map<string | number, ElicitHandler>();
  readonly #sample = new Map<string | number, SampleHandler>();
  readonly #roots = new Map<string | number, RootsHandler>();

  open(options: {
    onProgress?: ProgressListener;
    onElicit?: ElicitHandler;
    onSample?: SampleHandler;
    onRoots?: RootsHandler;
  }): CallRoute {
    const { onProgress, onElicit, onSample, onRoots } = options;
    // Most calls bring no handler: one route that routes nothing, not one made a call.
    if (!onProgress && !onElicit && !onSample && !onRoots) return NO_ROUTE;
    const token = onProgress ? ++this.#lastToken : undefined;
    if (token !== undefined && onProgress) this.#progress.set(token, onProgress);
    let id: number | undefined;
    const params: CallRoute["params"] = {};
    if (token !== undefined) params.progressToken = token;
    if (onElicit) params.elicit = true;
    if (onSample) params.sample = true;
    if (onRoots) params.roots = true;
    return {
      params,
      sent: (sentId) => {
        id = sentId;
        if (onElicit) this.#elicit.set(sentId, onElicit);
        if (onSample) this.#sample.set(sentId, onSample);
        if (onRoots) this.#roots.set(sentId, onRoots);
      },
      close: () => {
        if (token !== undefined) this.#progress.delete(token);
        if (id !== undefined && this.#elicit.get(id) === onElicit) this.#elicit.delete(id);
        if (id !== undefined && this.#sample.get(id) === onSample) this.#sample.delete(id);
        if (id !== undefined && this.#roots.get(id) === onRoots) this.#roots.delete(id);
      },
    };
  }

  /** The `progress` notification's listener, if its call is still in flight. */
  progressListener(token: unknown): ProgressListener | undefined {
    return typeof token === "string" || typeof token === "number"
      ? this.#progress.get(token)
      : undefined;
  }

  /** The answer to the daemon's `elicit`: the call's handler, else onElicit()'s, else decline. */
  async elicit(request: ElicitParams, signal: AbortSignal): Promise<ElicitResult> {
    const handler = this.#elicit.get(request.callId) ?? this.handler;
    if (handler === undefined) return DECLINE;
    return handler(request.params, { serverId: request.serverId, signal });
  }

  /** The answer to the daemon's `sample`: the call's handler, else onSample()'s, else refused. */
  async sample(request: SampleParams, signal: AbortSignal): Promise<CreateMessageResult> {
    const handler = this.#sample.get(request.callId) ?? this.sampler;
    if (handler === undefined) {
      throw new McpPoolError("not-offered", "sampling not available: this client has no handler");
    }
    return handler(request.params, { serverId: request.serverId, signal });
  }

  /** The answer to the daemon's `roots`: the call's handler, else refused. */
  async roots(request: RootsParams, signal: AbortSignal): Promise<RootsResult> {
    const handler = this.#roots.get(request.callId);
    if (handler === undefined) {
      throw new McpPoolError("not-offered", "roots not available: this call has no handler");
    }
    return handler(request.params, { serverId: request.serverId, signal });
  }
}
