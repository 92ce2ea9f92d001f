/**
 * What a connection does in each era of MCP, chosen once when it opens: the
 * client asks its era and never tests which one it is. A legacy connection sends each
 * request as is and tells of its changes with notifications. A modern one wraps every
 * request in the envelope, reads each result by its resultType, answers `input_required`
 * rounds, retries once at a version both speak, has no `ping`, `logging/setLevel`,
 * `resources/subscribe` or roots notification of its own, and hears of changes on its
 * change stream (2026-07-28 basic/patterns/subscriptions): no change notification comes
 * unsolicited, so a client that wants to hear of a changed list or an updated resource
 * opens one long-lived `subscriptions/listen` request naming what it wants, and the
 * server's notifications come on it until it is cancelled (`notifications/cancelled` on
 * stdio) or the connection ends. The filter asks for each list the server says changes
 * (its `listChanged` capabilities) and for the resources the pool subscribed to; a new
 * subscription opens a new stream before the old one is cancelled, so no change falls
 * between them.
 */
import type {
  ClientCapabilities,
  Implementation,
  LoggingLevel,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";

import { envelopeMeta, mutualModernVersion, supportedVersionsOf, type Era } from "../core/era.js";
import { ErrorCode, isMcpError, McpError } from "../core/mcp-error.js";
import {
  keyed,
  markAnsweredAfterInput,
  MAX_INPUT_ROUNDS,
  readResult,
  retryParams,
} from "./input-required.js";
import { offeredTools } from "../transport/modern-fetch.js";
import {
  isSchema,
  parsed,
  type Message,
  type RequestOptions,
  type ResultSchema,
} from "./protocol.js";

/** What the client is to a server: who it is and what it can do. */
export interface ClientSelf {
  readonly info: Implementation;
  readonly capabilities: ClientCapabilities;
}

/** What an era needs of the client it serves. */
export interface EraWire extends ClientSelf {
  /** The protocol's own request, as the SDK's `request(request, schema, options)`: no era. */
  send(
    request: Message,
    schemaOrOptions?: ResultSchema<unknown> | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<unknown>;
  notify(notification: Message): Promise<void>;
  /** Runs the client's own handler of a request the server embedded in a result. */
  answerLocally(request: Message, signal: AbortSignal): Promise<unknown>;
  /** What the server said it can do. */
  serverCapabilities(): ServerCapabilities | undefined;
  /** Something went wrong that no caller is waiting on. */
  failed(error: Error): void;
  /** Told what the server offered that the client will not use. */
  warn(text: string): void;
}

/** The client's behaviour that differs between the eras, behind one face. */
export interface EraStrategy {
  readonly era: Era;
  /** The revision the connection speaks: the handshake's, or the one modern requests name. */
  readonly protocolVersion: string;
  request<T>(
    request: Message,
    schemaOrOptions?: ResultSchema<T> | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<T>;
  ping(options?: RequestOptions): Promise<Record<string, never>>;
  /** The tools of a listing the client will offer. */
  offered(tools: Tool[]): Tool[];
  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<object>;
  subscribeResource(params: { uri: string }, options?: RequestOptions): Promise<object>;
  unsubscribeResource(params: { uri: string }, options?: RequestOptions): Promise<object>;
  sendRootsListChanged(): Promise<void>;
  /** The connection is open: start listening for changes, if the era must ask. */
  opened(): void;
  /** The connection is closing. */
  closing(): void;
}

/** A legacy connection: the initialize handshake's, every method sent as itself. */
export class LegacyEra implements EraStrategy {
  readonly era = "legacy";
  readonly #wire: EraWire;
  readonly protocolVersion: string;

  constructor(wire: EraWire, protocolVersion: string) {
    this.#wire = wire;
    this.protocolVersion = protocolVersion;
  }

  request<T>(
    request: Message,
    schemaOrOptions?: ResultSchema<T> | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<T> {
    return this.#wire.send(request, schemaOrOptions, maybeOptions) as Promise<T>;
  }

  ping(options?: RequestOptions): Promise<Record<string, never>> {
    return this.request({ method: "ping" }, options);
  }

  offered(tools: Tool[]): Tool[] {
    return tools;
  }

  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<object> {
    return this.request({ method: "logging/setLevel", params: { level } }, options);
  }

  subscribeResource(params: { uri: string }, options?: RequestOptions): Promise<object> {
    return this.request({ method: "resources/subscribe", params }, options);
  }

  unsubscribeResource(params: { uri: string }, options?: RequestOptions): Promise<object> {
    return this.request({ method: "resources/unsubscribe", params }, options);
  }

  sendRootsListChanged(): Promise<void> {
    return this.#wire.notify({ method: "notifications/roots/list_changed" });
  }

  opened(): void {}

  closing(): void {}
}

/** `request` with the modern envelope in its `_meta`, at `version`. */
export function modernMessage(
  request: Message,
  version: string,
  self: ClientSelf & { readonly logLevel?: LoggingLevel | undefined },
  options?: RequestOptions,
): Message {
  const caller = options?.caller;
  return {
    method: request.method,
    params: {
      ...request.params,
      _meta: envelopeMeta(
        {
          protocolVersion: version,
          clientInfo: caller?.clientInfo ?? self.info,
          clientCapabilities: caller?.capabilities ?? self.capabilities,
          // A caller's own level, or none: never another caller's.
          logLevel: caller ? caller.logLevel : self.logLevel,
        },
        request.params?._meta as Record<string, unknown> | undefined,
      ),
    },
  };
}

/** A modern connection: `server/discover`'s, every request in its envelope. */
export class ModernEra implements EraStrategy {
  readonly era = "modern";
  readonly #wire: EraWire;
  #version: string;
  /**
   * The connection's log level (no logging/setLevel), sent in the envelope of each request
   * that names no caller: the pool's own, a library's without one.
   */
  #logLevel: LoggingLevel | undefined;
  /** The `subscriptions/listen` stream. */
  readonly #changes: ChangeStream;

  constructor(wire: EraWire, version: string) {
    this.#wire = wire;
    this.#version = version;
    this.#changes = new ChangeStream({
      listen: (filter, signal) =>
        this.request(
          { method: "subscriptions/listen", params: { notifications: filter } },
          { timeout: Infinity, signal },
        ),
      capabilities: () => wire.serverCapabilities(),
      failed: (error) => {
        if (isMcpError(error, ErrorCode.ConnectionClosed)) return;
        wire.failed(new Error(`the subscriptions/listen stream failed: ${String(error)}`));
      },
    });
  }

  get protocolVersion(): string {
    return this.#version;
  }

  /**
   * Every request carries the envelope, its result is read by its resultType, an
   * `input_required` is answered by the client's own handlers and sent again with the
   * answers and the server's state untouched, and a -32022 is sent once more at a version
   * both speak.
   */
  request<T>(
    request: Message,
    schemaOrOptions?: ResultSchema<T> | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<T> {
    // No such method in the modern era (a passthrough's): the level of caller-less requests.
    if (request.method === "logging/setLevel") {
      return this.setLoggingLevel(request.params?.level as LoggingLevel) as Promise<T>;
    }
    const schema = isSchema(schemaOrOptions) ? (schemaOrOptions as ResultSchema<T>) : undefined;
    const options = schema ? maybeOptions : (schemaOrOptions as RequestOptions | undefined);
    const sent = this.#request(request, options);
    return schema ? sent.then((result) => parsed(schema, result)) : (sent as Promise<T>);
  }

  async #request(request: Message, options: RequestOptions | undefined): Promise<unknown> {
    const self = { info: this.#wire.info, capabilities: this.#wire.capabilities };
    let params = request.params;
    let retriedVersion = false;
    for (let round = 0; round <= MAX_INPUT_ROUNDS;) {
      let result: unknown;
      try {
        result = await this.#wire.send(
          modernMessage(
            { method: request.method, params },
            this.#version,
            { ...self, logLevel: this.#logLevel },
            options,
          ),
          options,
        );
      } catch (error) {
        const supported = isMcpError(error) ? supportedVersionsOf(error) : undefined;
        const mutual = supported ? mutualModernVersion(supported) : undefined;
        // Once, at the version the rejection names (SEP-2575), even the one it refused.
        if (retriedVersion || mutual === undefined) throw error;
        retriedVersion = true;
        this.#version = mutual;
        continue;
      }
      const read = readResult(request.method, result);
      if (read.kind === "complete") {
        if (round > 0) markAnsweredAfterInput(read.result);
        return read.result;
      }
      round += 1;
      const signal = options?.signal ?? new AbortController().signal;
      const asking = Object.entries(read.inputRequests);
      const asked = Object.fromEntries(asking.map(([key, { method }]) => [key, method]));
      const local = (question: Message, on: AbortSignal) => this.#wire.answerLocally(question, on);
      // All of a round's questions at once: a host answers them together. The key
      // and the round go with each, for a bridge that asks a modern host in turn.
      const answered = await Promise.all(
        asking.map(async ([key, request]) => {
          const question = keyed(request, key, asked);
          const answer = options?.answer
            ? await options.answer(question, signal as AbortSignal, local)
            : await local(question, signal as AbortSignal);
          return [key, answer] as const;
        }),
      );
      params = retryParams(request.params, Object.fromEntries(answered), read.requestState);
    }
    throw new McpError(
      ErrorCode.InvalidRequest,
      `${request.method} still asked for input after ${MAX_INPUT_ROUNDS} rounds; giving up`,
    );
  }

  /** A modern server has no `ping`: `server/discover` is what it always answers. */
  async ping(options?: RequestOptions): Promise<Record<string, never>> {
    await this.request({ method: "server/discover" }, options);
    return {};
  }

  /** A tool whose x-mcp-header marks break the rules is not offered (SEP-2243). */
  offered(tools: Tool[]): Tool[] {
    const { offered, refused } = offeredTools(tools);
    for (const why of refused) this.#wire.warn(why);
    return offered;
  }

  /** The level rides in every request's envelope; nothing is sent. */
  setLoggingLevel(level: LoggingLevel): Promise<object> {
    this.#logLevel = level;
    return Promise.resolve({});
  }

  /** A subscription is a resource in the change stream's filter. */
  subscribeResource(params: { uri: string }): Promise<object> {
    this.#changes.subscribe(params.uri);
    return Promise.resolve({});
  }

  unsubscribeResource(params: { uri: string }): Promise<object> {
    this.#changes.unsubscribe(params.uri);
    return Promise.resolve({});
  }

  /** A modern server asks for roots in each request that needs them: nothing to tell. */
  sendRootsListChanged(): Promise<void> {
    return Promise.resolve();
  }

  /** Nothing changes unsolicited in the modern era: the stream is asked for. */
  opened(): void {
    this.#changes.start();
  }

  closing(): void {
    this.#changes.stop();
  }
}

/** The `notifications` filter of a `subscriptions/listen` request. */
export interface ListenFilter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
}

/** The first message on a stream, which says what the server agreed to send: nothing to hand on. */
export const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

/** What a server with `capabilities` can tell of, with updates of `uris`; undefined when nothing. */
export function listenFilter(
  capabilities: ServerCapabilities | undefined,
  uris: ReadonlySet<string>,
): ListenFilter | undefined {
  const filter: ListenFilter = {
    ...(capabilities?.tools?.listChanged ? { toolsListChanged: true as const } : {}),
    ...(capabilities?.prompts?.listChanged ? { promptsListChanged: true as const } : {}),
    ...(capabilities?.resources?.listChanged ? { resourcesListChanged: true as const } : {}),
    ...(uris.size > 0 ? { resourceSubscriptions: [...uris].sort() } : {}),
  };
  return Object.keys(filter).length > 0 ? filter : undefined;
}

export interface ChangeStreamInit {
  /** Sends `subscriptions/listen` with `filter`, with no timeout; aborting `signal` cancels it. */
  listen(filter: ListenFilter, signal: AbortSignal): Promise<unknown>;
  /** What the server said it can do, once connected. */
  capabilities(): ServerCapabilities | undefined;
  /** A stream ended with an error other than its own cancel or the connection's close. */
  failed(error: unknown): void;
}

export class ChangeStream {
  readonly #init: ChangeStreamInit;
  readonly #uris = new Set<string>();
  /** The open stream's cancel, if one is open. */
  #open: AbortController | undefined;
  #stopped = false;

  constructor(init: ChangeStreamInit) {
    this.#init = init;
  }

  /** Opens (or reopens with what is asked now) the stream; cancels it when nothing is. */
  start(): void {
    if (this.#stopped) return;
    const before = this.#open;
    const filter = listenFilter(this.#init.capabilities(), this.#uris);
    this.#open = undefined;
    if (filter !== undefined) {
      const controller = new AbortController();
      this.#open = controller;
      this.#init.listen(filter, controller.signal).then(
        () => this.#ended(controller),
        (error: unknown) => {
          this.#ended(controller);
          if (!controller.signal.aborted && !this.#stopped) this.#init.failed(error);
        },
      );
    }
    before?.abort(new Error("replaced by a stream with a new filter"));
  }

  /** `resources/subscribe` in the modern era: `uri` joins the stream's filter. */
  subscribe(uri: string): void {
    if (this.#uris.has(uri)) return;
    this.#uris.add(uri);
    this.start();
  }

  unsubscribe(uri: string): void {
    if (!this.#uris.delete(uri)) return;
    this.start();
  }

  /** The connection is closing: the stream goes with it, and none opens again. */
  stop(): void {
    this.#stopped = true;
    this.#open?.abort(new Error("the connection is closing"));
    this.#open = undefined;
  }

  #ended(controller: AbortController): void {
    if (this.#open === controller) this.#open = undefined;
  }
}
