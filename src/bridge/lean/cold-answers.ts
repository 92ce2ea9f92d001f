/**
 * A host's first look answered before the daemon is up. An entry that must start the daemon
 * (wired while it was down, after a crash or a reboot) used to leave the host waiting for
 * the daemon and then its server; Claude Code's `claude -p` gives its MCP servers 5 s
 * before its first turn, and a loaded machine took longer. So the daemon keeps, per server,
 * what it answered a host's opening — its `initialize` or `server/discover`, and the listings
 * after it — byte for byte (OpeningRecorder, in the daemon's MCP sockets), and a cold entry
 * gives the same bytes to a host that opens with the same request (ColdAnswers) while the
 * daemon starts, then carries the session on to it (session.ts). Whether a recording is
 * still what the daemon would answer is the daemon stores' to say (the server's row and the
 * tools cache unchanged since); here is only the recording and its replay.
 *
 * A recording ends at the first thing that would make its bytes depend on more than the
 * host's requests: a request that is neither an opening nor a listing, a request of the
 * daemon's other than `roots/list` (which the daemon asks again once the session is carried
 * on to it). Notifications are passed over: the daemon sends them again in that session if
 * the server does. A dual-era host's `server/discover` answered with an error, then its
 * `initialize`, is one recording.
 *
 * Node alone, as the lean bridge: no SDK.
 */

/** A request without its id, and the answer the daemon sent it (as sent, without the newline). */
export interface Exchange {
  request: string;
  answer: string;
}

/** A session's opening exchange and the exchanges after it (another opening, listings). */
export interface Opening extends Exchange {
  lists: Exchange[];
}

/** The requests that open a session, in either era. */
const OPENERS = new Set(["initialize", "server/discover"]);

/** Listings: read-only, answered from what the daemon last said to the same request. */
const LISTINGS = new Set([
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
]);

type Id = string | number;

const isId = (id: unknown): id is Id => typeof id === "string" || typeof id === "number";

function parseObject(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A request line's method, id, and key: the line without its id, the rest as the host wrote it. */
export function requestOf(line: string): { method: string; id: Id; key: string } | undefined {
  const message = parseObject(line);
  if (message === undefined || typeof message.method !== "string" || !isId(message.id)) {
    return undefined;
  }
  const { id, ...rest } = message;
  return { method: message.method, id, key: JSON.stringify(rest) };
}

/** `answer` (a recorded answer's JSON) with `id` in place of the recorded one, framed. */
export function answerWithId(answer: string, id: Id): string {
  const message = parseObject(answer) ?? {};
  message.id = id;
  return `${JSON.stringify(message)}\n`;
}

/** The list a listing method lists (`resources/templates/list` is the resources'). */
export function listKindOf(method: string): "tools" | "prompts" | "resources" {
  return method.startsWith("resources/")
    ? "resources"
    : method.startsWith("prompts/")
      ? "prompts"
      : "tools";
}

/**
 * Watches one session on the daemon's side: the host's lines as they arrive, the daemon's
 * messages as they are sent. `learnt` gets the opening each time a recorded answer adds to it.
 */
export class OpeningRecorder {
  private opening: Opening | undefined;
  /** The opening request's id, JSON. */
  private openerId: string | undefined;
  /** Recorded requests not answered yet: JSON of their id → their key. */
  private readonly due = new Map<string, string>();
  /** Listings answered before the opening was. */
  private readonly early: Opening["lists"] = [];
  private over = false;

  constructor(private readonly learnt: (opening: Opening) => void) {}

  /** A whole line from the host. */
  hostLine(line: string): void {
    if (this.over) return;
    const request = requestOf(line);
    if (request === undefined) return;
    const first = this.openerId === undefined;
    if (!OPENERS.has(request.method) && (first || !LISTINGS.has(request.method))) {
      this.over = true;
      return;
    }
    const id = JSON.stringify(request.id);
    if (first) this.openerId = id;
    this.due.set(id, request.key);
  }

  /** A message the daemon sent the host, as its transport wrote it (JSON, no newline). */
  sent(text: string): void {
    if (this.over) return;
    const message = parseObject(text);
    // A notification, or the daemon asking the host for its roots: not the host's answers.
    if (message?.method === "roots/list" || (message?.method !== undefined && !("id" in message))) {
      return;
    }
    const id = message !== undefined && !("method" in message) ? JSON.stringify(message.id) : "";
    const key = this.due.get(id);
    if (key === undefined) {
      this.over = true;
      return;
    }
    this.due.delete(id);
    // A listing answered before the opening (a modern host's discovery waits for the
    // children its listing needs; a listing sent with it may be answered first): kept for it.
    if (this.opening === undefined && id !== this.openerId) {
      this.early.push({ request: key, answer: text });
      return;
    }
    if (this.opening === undefined)
      this.opening = { request: key, answer: text, lists: this.early };
    else this.opening.lists.push({ request: key, answer: text });
    this.learnt(structuredClone(this.opening));
  }
}

/** A cold entry's answers: a host line's answer from the recording, while one applies. */
export class ColdAnswers {
  private opening: Opening | undefined;
  /** A line had no recorded answer: from there on, every line waits for the daemon, in order. */
  private off = false;

  constructor(private readonly openings: readonly Opening[]) {}

  /** The framed answer to a host line, or undefined: the line waits for the daemon. */
  answer(line: string): { method: string; answer: string } | undefined {
    if (this.off) return undefined;
    const request = requestOf(line);
    // A notification (`notifications/initialized`) waits, in its place, without ending this.
    if (request === undefined) {
      if (parseObject(line)?.method === undefined) this.off = true;
      return undefined;
    }
    const found =
      this.opening === undefined
        ? (this.opening = this.openings.find((o) => o.request === request.key))
        : LISTINGS.has(request.method) || OPENERS.has(request.method)
          ? this.opening.lists.find((l) => l.request === request.key)
          : undefined;
    if (found === undefined) {
      this.off = true;
      return undefined;
    }
    return { method: request.method, answer: answerWithId(found.answer, request.id) };
  }
}
