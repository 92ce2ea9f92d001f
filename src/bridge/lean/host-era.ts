/**
 * How a list change is said to the host of a lean session, in its era, decided once: legacy
 * after an `initialize`; after a `server/discover`, what the daemon answered (a result, from
 * the daemon or a recording of the daemon's, is 2026-07-28; an error is legacy); and only
 * while neither has decided, a request in that revision's envelope (`_meta` naming the
 * protocol version) makes it 2026-07-28, as for a host that skips discovery. A host whose
 * discovery was refused stays legacy, whatever envelope it goes on sending: the daemon tells
 * it unsolicited, and so does this. A legacy host is told
 * unsolicited (`notifications/tools/list_changed`). A 2026-07-28 host hears a change only on a
 * `subscriptions/listen` of its that asked for that kind, the notification naming the
 * subscription in `_meta["io.modelcontextprotocol/subscriptionId"]` — what a modern server
 * sends on stdio (the SDK's StdioListenRouter). What each subscription takes is what the
 * daemon acknowledged for it (`notifications/subscriptions/acknowledged`), so the host hears
 * of no kind the daemon would not tell it.
 *
 * Node alone, as the lean bridge: no SDK.
 */

/** The `_meta` key naming the listen subscription a notification belongs to. */
export const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";
/** The `_meta` key a 2026-07-28 host names its revision with, on each request. */
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";

type Id = string | number;

/** A JSON-RPC message, as parsed: only what is read here. */
interface Message {
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

interface Params {
  _meta?: Record<string, unknown>;
  requestId?: unknown;
  notifications?: unknown;
}

const paramsOf = (message: Message): Params =>
  typeof message.params === "object" && message.params !== null ? (message.params as Params) : {};

/** The listen filter's flag for a list kind. */
const FLAG = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
} as const;

export type ListKind = keyof typeof FLAG;

const isId = (id: unknown): id is Id => typeof id === "string" || typeof id === "number";

/** One session's era and its host's acknowledged listen subscriptions. */
export class HostEra {
  /** The session is served in 2026-07-28: its `server/discover` was answered with a result. */
  private modern = false;
  /** An `initialize` or the discovery's answer decided the era: no envelope changes it. */
  private decided = false;
  /** The host's `server/discover` waiting for its answer: JSON of its id. */
  private discover: string | undefined;
  /** Acknowledged subscriptions: JSON of the listen request's id → its id and honored filter. */
  private readonly listens = new Map<string, { id: Id; filter: Record<string, unknown> }>();

  /** The session is served in 2026-07-28. */
  get isModern(): boolean {
    return this.modern;
  }

  /**
   * An `initialize` or the discovery's answer decided the era: the host opened a session
   * (one whose discovery was refused did, though it may never send `initialize`: a server
   * direct tells it of a list change unsolicited all the same).
   */
  get isDecided(): boolean {
    return this.decided;
  }

  /** A message from the host. */
  fromHost(message: Message): void {
    const params = paramsOf(message);
    if (message.method === "initialize") this.decide(false);
    // A request in the 2026-07-28 envelope, nothing decided yet: the host speaks that revision.
    else if (!this.decided && typeof params._meta?.[PROTOCOL_VERSION_KEY] === "string") {
      this.modern = true;
    }
    if (message.method === "server/discover" && isId(message.id)) {
      this.discover = JSON.stringify(message.id);
    }
    if (message.method === "notifications/cancelled") {
      this.listens.delete(JSON.stringify(params.requestId));
    }
  }

  /** A message from the daemon to the host. */
  fromDaemon(message: Message): void {
    if (message.method === "notifications/subscriptions/acknowledged") {
      const params = paramsOf(message);
      const id = params._meta?.[SUBSCRIPTION_ID_KEY];
      const filter = params.notifications;
      if (isId(id) && typeof filter === "object" && filter !== null) {
        this.listens.set(JSON.stringify(id), { id, filter: filter as Record<string, unknown> });
      }
    } else if (message.method === undefined && isId(message.id)) {
      const id = JSON.stringify(message.id);
      // Discovery answered: a result is the modern era; an error leaves the host legacy.
      if (id === this.discover) this.decide("result" in message);
      // The listen's own answer: the daemon closed that subscription.
      this.listens.delete(id);
    }
  }

  private decide(modern: boolean): void {
    this.modern = modern;
    this.decided = true;
    this.discover = undefined;
  }

  /** The listen subscription `id` ended without the daemon's answer (this side answered it). */
  listenEnded(id: Id): void {
    this.listens.delete(JSON.stringify(id));
  }

  /** The framed lines that tell the host list `kind` changed; none when its era would not. */
  listChanged(kind: ListKind): string[] {
    const method = `notifications/${kind}/list_changed`;
    if (!this.modern) return [`${JSON.stringify({ jsonrpc: "2.0", method })}\n`];
    return [...this.listens.values()]
      .filter(({ filter }) => filter[FLAG[kind]] === true)
      .map(
        ({ id }) =>
          `${JSON.stringify({ jsonrpc: "2.0", method, params: { _meta: { [SUBSCRIPTION_ID_KEY]: id } } })}\n`,
      );
  }
}
