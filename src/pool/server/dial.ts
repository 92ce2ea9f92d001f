/**
 * Dialling one server: a transport from the row, an SDK client with the pool's handlers
 * (notifications, tools/list_changed, elicitation, sampling), the initialize handshake and
 * the first tools/list walk, all on one connect budget. A failure closes what was opened
 * and is said as a pool error (connect-failed, timeout, auth-required) with the child's
 * stderr tail or the cause's code (`causeCode`: ECONNREFUSED…); the entry decides what it means for
 * the server's state.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

import type { McpServerConfig } from "../../config/rows.js";
import { newConnection, type Connection } from "./connection.js";
import { causeCode, withCause } from "../core/causes.js";
import { McpPoolError } from "../core/errors.js";
import { listTools, type CacheHint } from "../mcp/list-tools.js";
import { McpClient } from "../mcp/client.js";
import { ErrorCode, isMcpError } from "../core/mcp-error.js";
import {
  EraMismatchError,
  pinMismatchMessage,
  usableVerdict,
  type EraPlan,
  type EraVerdict,
} from "../core/era.js";
import type { EntryContext } from "./context.js";
import { probeOnSpare, spareProbeOf } from "./spare-probe.js";
import { processOf } from "../transport/transport.js";
import { isBrokenPipe } from "../transport/stdio-transport.js";
import { isHttpTransport, listenAgain } from "../transport/http-client.js";
import type { ServerNotification } from "../core/types.js";
import { serverLog } from "../core/server-log.js";
import { sessionLost } from "./session.js";

/**
 * Bound on waiting for a child that died under the handshake to be done (exited, stderr read
 * to its end) before its failure is said, ms: only a grandchild holding its stderr makes it
 * wait this long.
 */
export const DIED_AT_START_MS = 2_000;

/** A dial's connection, its first list and that list's cache hint. */
export interface Dialled {
  connection: Connection;
  tools: Tool[];
  hint: CacheHint;
}

/** What the entry is told about a connection once its client exists. */
export interface DialHandlers {
  /** The server sent tools/list_changed on `connection`. */
  listChanged(connection: Connection): void;
  /** The transport of `connection` closed, by us or not. */
  closed(connection: Connection): void;
  /** The auth-required sentence when `cause` means a sign-in is wanted; else undefined. */
  authCause(cause: unknown): string | undefined;
  /** `error` without the row's secrets. */
  redact(error: McpPoolError): McpPoolError;
  /** The era the entry last found the server to speak, for the dial's plan. */
  verdict?: EraVerdict | undefined;
  /** A spare child probes beside the dial (spare-probe.ts): what it finds, once the dial is done. */
  probing?(found: Promise<EraVerdict>): void;
  /** The serving transport exists (its child starts with the handshake): to show and to end. */
  opened?(transport: Transport): void;
}

/**
 * How a dial of `row` over `transport` finds its era: its pin, the verdict the
 * entry keeps if it is still believed, and whether server/discover may go first: over the
 * pool's HTTP transport, yes; a stdio child may exit on any request before initialize, so
 * there (and on a custom transport, which could be either) only a pin or a verdict sends it.
 */
export function eraPlan(
  row: McpServerConfig,
  verdict: EraVerdict | undefined,
  transport: Transport,
): EraPlan {
  const pin = row.protocol ?? "auto";
  const prior = pin === "legacy" ? undefined : usableVerdict(verdict, Date.now());
  return { pin, prior, discoverFirst: isHttpTransport(transport) };
}

/**
 * Opens a connection to `row` and lists its tools (unless the pool does not index), within
 * `budget` ms for the whole of it. Rejects with a redacted pool error, after closing
 * whatever it had opened. A dial on a modern verdict that fails is made once more without
 * it: the server may have changed, and what it says now is the verdict. A stdio row with
 * no believed verdict has its era found on a spare child first (spare-probe.ts, on its own
 * bound; the serving child keeps the whole budget).
 */
export async function dial(
  row: McpServerConfig,
  context: EntryContext,
  budget: number | undefined,
  handlers: DialHandlers,
): Promise<Dialled> {
  let verdict = handlers.verdict;
  const started = Date.now();
  // A stdio server's era is found on a spare child, never on the one that serves.
  const spare = spareProbeOf(row, verdict, context, started);
  if (spare === "first") verdict = await probeOnSpare(row, context, budget);
  // The budget is the caller's whole wait: what the spare child took is not given again.
  const dialled = dialOn(row, context, { budget, started }, handlers, verdict);
  if (spare === "beside") {
    // Told once the serving dial is done, so its own (undated) legacy verdict is not the last.
    const found = probeOnSpare(row, context, budget);
    handlers.probing?.(dialled.then(undefined, () => undefined).then(() => found));
  }
  return dialled;
}

/** The connect budget (ms, undefined: none) and when the wait for it began (epoch ms). */
interface Budget {
  budget: number | undefined;
  started: number;
}

async function dialOn(
  row: McpServerConfig,
  context: EntryContext,
  budget: Budget,
  handlers: DialHandlers,
  verdict: EraVerdict | undefined,
): Promise<Dialled> {
  if (usableVerdict(verdict, Date.now())?.era !== "modern" || row.protocol === "legacy") {
    return dialOnce(row, context, budget, handlers, verdict);
  }
  try {
    return await dialOnce(row, context, budget, handlers, verdict);
  } catch (error) {
    const code = (error as McpPoolError).code;
    if (code === "auth-required" || code === "timeout") throw error;
    return dialOnce(row, context, budget, handlers, undefined);
  }
}

async function dialOnce(
  row: McpServerConfig,
  context: EntryContext,
  { budget, started: waiting }: Budget,
  handlers: DialHandlers,
  verdict: EraVerdict | undefined,
): Promise<Dialled> {
  const started = Date.now();
  let transport: Transport | undefined;
  let connection: Connection | undefined;
  /** What the dial waits on, for the timeout's message. */
  let awaiting: Awaiting = "initialize";
  try {
    // Opened ahead (its handshake done, `initialized` held): it goes on from there.
    const ahead = await context.openedAhead?.();
    transport = ahead?.transport ?? (await context.createTransport(row, context.transportContext));
    handlers.opened?.(transport);
    const client =
      ahead?.client ?? new McpClient(context.clientInfo, { capabilities: context.capabilities });
    const current = newConnection(client, transport, started);
    connection = current;
    installHandlers(row.id, current, context, handlers);
    const deadline = budget === undefined ? undefined : waiting + budget;
    if (ahead === undefined) {
      const plan = eraPlan(row, verdict, transport);
      if (
        plan.discoverFirst ||
        plan.prior?.era === "modern" ||
        !["auto", "legacy"].includes(plan.pin)
      ) {
        awaiting = "discover";
      }
      const left = deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
      await client.connect(transport, left === undefined ? {} : { timeout: left }, plan);
    } else await client.initialized();
    awaiting = "tools/list";
    const remaining = deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
    const listed = context.indexTools
      ? await listTools(client, remaining === undefined ? {} : { timeout: remaining })
      : { tools: [], hint: {} };
    // A handed session is alive here now: its GET stream opens here (ListenStream, fetch.ts).
    listenAgain(transport);
    return { connection, ...listed };
  } catch (cause) {
    if (connection) connection.closing = true;
    const child = transport ? processOf(transport) : undefined;
    // The handshake's write found the child gone (it died at start): its exit code and the
    // stderr that says why are still on their way, and they are the error.
    if (child && isBrokenPipe(cause)) await child.ended(DIED_AT_START_MS);
    const stderr = child?.stderr.text();
    const exit = child?.exit;
    await transport?.close().catch(() => undefined);
    // A session another daemon handed over that the server no longer knows: open a new one,
    // as a cold start would (the handed session was taken, so this dial initializes).
    if (!child && transport && handedOver(transport) && sessionLost(cause)) {
      return dialOnce(row, context, { budget, started: waiting }, handlers, verdict);
    }
    throw handlers.redact(
      connectError(row.id, cause, { budget, awaiting }, stderr, exit, handlers.authCause(cause)),
    );
  }
}

/** A connection opened ahead of its use: started, its handshake done, `initialized` held. */
export interface OpenedAhead {
  client: McpClient;
  transport: Transport;
}

/**
 * Opens `row` in the 2025-11-25 era as a dial would — the same transport, client and
 * capabilities (`context`'s) — within `budget` ms, holding `initialized` (McpClient
 * holdInitialized): its server asks for roots only once the dial that takes it sends it.
 * Rejects, having closed what it opened, as the handshake failed.
 */
export async function openAhead(
  row: McpServerConfig,
  context: EntryContext,
  budget: number | undefined,
): Promise<OpenedAhead> {
  const transport = await context.createTransport(row, context.transportContext);
  const client = new McpClient(context.clientInfo, {
    capabilities: context.capabilities,
    holdInitialized: true,
  });
  try {
    await client.connect(transport, budget === undefined ? {} : { timeout: budget });
    return { client, transport };
  } catch (error) {
    await transport.close().catch(() => undefined);
    throw error;
  }
}

/** Whether `transport` goes on in a session another daemon handed over. */
function handedOver(transport: Transport): boolean {
  return (transport as { handedSession?: unknown }).handedSession !== undefined;
}

/** Since when the server of a handed-over transport serves, if the old daemon said. */
function handedStart(transport: Transport): number | undefined {
  return (transport as { handedSession?: { startedAt?: number } }).handedSession?.startedAt;
}

/** Fills in what the server said about itself once the handshake and listing are done. */
export function learnServer(connection: Connection): void {
  const { client, transport } = connection;
  connection.pid = processOf(transport)?.pid;
  // A handed-over server has served since its first daemon dialled it.
  connection.startedAt = handedStart(transport) ?? Date.now();
  connection.instructions = client.getInstructions();
  connection.capabilities = client.getServerCapabilities() as Record<string, unknown> | undefined;
  const info = client.getServerVersion();
  connection.serverInfo = info === undefined ? undefined : { ...info };
  connection.era = client.era;
  connection.protocolVersion = client.protocolVersion;
}

function installHandlers(
  serverId: string,
  connection: Connection,
  context: EntryContext,
  handlers: DialHandlers,
): void {
  const client = connection.client;
  client.fallbackNotificationHandler = async (notification) => {
    context.notify(serverId, notification as ServerNotification, connection);
  };
  client.setNotificationHandler("notifications/tools/list_changed", async (notification) => {
    context.notify(serverId, notification as ServerNotification, connection);
    handlers.listChanged(connection);
  });
  // The SDK Client's checks on both, loaded with the first such request.
  const elicit = context.elicit;
  const elicitation = context.capabilities.elicitation;
  if (elicit && elicitation) {
    client.setRequestHandler("elicitation/create", async (request, extra) => {
      const { checkedElicitation } = await import("../mcp/server-requests.js");
      return checkedElicitation(request, elicitation, (params) =>
        elicit(serverId, params, extra.signal),
      );
    });
  }
  const sample = context.sample;
  if (sample && context.capabilities.sampling) {
    client.setRequestHandler("sampling/createMessage", async (request, extra) => {
      const { checkedSampling } = await import("../mcp/server-requests.js");
      return checkedSampling(request, (params) => sample(serverId, params, extra.signal));
    });
  }
  const roots = context.roots;
  if (roots && context.capabilities.roots) {
    client.setRequestHandler("roots/list", async () => {
      roots.asked(connection);
      return { roots: roots.list().map((root) => ({ ...root })) };
    });
  }
  client.onclose = () => {
    // A handed child let go of (the old daemon called the hand-over off) did not crash.
    if (processOf(connection.transport)?.disowned === true) connection.closing = true;
    handlers.closed(connection);
  };
  client.warn = (text) => serverLog(context.log, serverId).error(text);
}

/** What a server whose connection closed under us did, with its stderr tail; not redacted. */
export function crashMessage(serverId: string, connection: Connection): string {
  const child = processOf(connection.transport);
  const how = child?.exit ? describeExit(child.exit) : "closed the connection";
  const stderr = child?.stderr.text();
  return `server "${serverId}" ${how} unexpectedly${stderr ? `; stderr:\n${stderr}` : ""}`;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

function describeExit(exit: Exit): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  if (exit.code !== null) return `exited with code ${exit.code}`;
  return "exited";
}

/** What a dial waits on: the handshake (either era's first request), or the tool list. */
type Awaiting = "initialize" | "discover" | "tools/list";

/** What a server that did not answer within the connect budget failed to do. */
const NOT_ANSWERED: Record<Awaiting, string> = {
  initialize: "did not answer `initialize`",
  discover: "did not answer `server/discover` or `initialize`",
  "tools/list": "did not finish listing its tools (`tools/list`)",
};

function connectError(
  id: string,
  cause: unknown,
  { budget, awaiting }: { budget: number | undefined; awaiting: Awaiting },
  stderr: string | undefined,
  exit: Exit | undefined,
  authMessage: string | undefined,
): McpPoolError {
  if (cause instanceof McpPoolError) return cause;
  if (cause instanceof EraMismatchError) {
    return new McpPoolError("connect-failed", pinMismatchMessage(id, cause.pin, cause.speaks), {
      serverId: id,
      speaks: cause.speaks,
      ...(stderr ? { stderr } : {}),
    });
  }
  if (authMessage !== undefined) {
    return new McpPoolError("auth-required", authMessage, { serverId: id }, { cause });
  }
  const code = causeCode(cause);
  const detail = {
    serverId: id,
    ...(stderr ? { stderr } : {}),
    ...(code !== undefined ? { causeCode: code } : {}),
  };
  const tail = stderr ? `; stderr:\n${stderr}` : "";
  if (isMcpError(cause, ErrorCode.RequestTimeout)) {
    return new McpPoolError(
      "timeout",
      `server "${id}" ${NOT_ANSWERED[awaiting]} within ${budget ?? 60_000} ms (connectTimeoutMs)${tail}`,
      { ...detail, timeoutMs: budget ?? 60_000 },
      { cause },
    );
  }
  const reason =
    exit && (exit.code !== null || exit.signal)
      ? describeExit(exit)
      : withCause((cause as Error).message, code);
  return new McpPoolError(
    "connect-failed",
    `could not connect to server "${id}": ${reason}${tail}`,
    detail,
    { cause },
  );
}
