/**
 * probe(row): dial a row that need not be saved, list its tools, hang up.
 * Reports rather than throws; the error is the child's stderr where there is one.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Environment } from "../../config/placeholders.js";
import type { McpServerConfig } from "../../config/rows.js";
import { causeCode, withCause } from "../core/causes.js";
import { redactSecrets, secretValues } from "../core/secrets.js";
import type { ChildEnvPolicy } from "../transport/child-env.js";
import { toolsFingerprint } from "../core/fingerprint.js";
import { McpClient } from "../mcp/client.js";
import { eraPlan } from "./dial.js";
import { listAllTools } from "../mcp/list-tools.js";
import {
  createDefaultTransport,
  processOf,
  type CreateTransport,
  type FetchLike,
  type TransportContext,
} from "../transport/transport.js";
import type { EntryContext } from "./context.js";
import type { ProbeResult } from "../core/types.js";
import { VERSION } from "../../version.js";

export interface ProbeOptions {
  /** Budget for the whole dial and walk, ms. Outranks the row's connectTimeoutMs. */
  timeoutMs?: number;
  createTransport?: CreateTransport;
  childEnv?: ChildEnvPolicy;
  /** Variables the probed child gets over its row's (TransportContext.childMark). */
  childMark?: Readonly<Record<string, string>>;
  fetch?: FetchLike;
  /** Where placeholders are read. Default: process.env. */
  env?: Environment;
  /** Told each placeholder variable that is unset and has no default. */
  onUnsetVariable?: (serverId: string, name: string) => void;
  /** The OAuth provider of an http row (see TransportContext); none: a 401 fails the probe. */
  authProvider?: TransportContext["authProvider"];
  /**
   * What the probe's client declares. A pool probes with its own, so a server that offers
   * some tools only to clients that can elicit or sample lists the same tools as the pool's.
   */
  capabilities?: ClientCapabilities;
}

/** The client identity a probe presents; `-probe` is appended to the name. */
export type ProbeIdentity = string | { name: string; version?: string };

export async function probe(
  row: McpServerConfig,
  identity: ProbeIdentity = "mcpool",
  options: ProbeOptions = {},
): Promise<ProbeResult> {
  const name = typeof identity === "string" ? identity : identity.name;
  const version = typeof identity === "string" ? VERSION : (identity.version ?? VERSION);
  const budget = options.timeoutMs ?? row.connectTimeoutMs ?? undefined;
  const createTransport = options.createTransport ?? createDefaultTransport;
  let transport: Transport | undefined;
  let client: McpClient | undefined;
  try {
    transport = await createTransport(row, {
      childEnv: options.childEnv ?? "inherit",
      ...(options.childMark ? { childMark: options.childMark } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.onUnsetVariable ? { onUnsetVariable: options.onUnsetVariable } : {}),
      ...(options.authProvider ? { authProvider: options.authProvider } : {}),
    });
    client = new McpClient(
      { name: `${name}-probe`, version },
      { capabilities: options.capabilities ?? {} },
    );
    const started = Date.now();
    // Either era: a one-off dial keeps no verdict, so it finds the server's.
    const plan = eraPlan(row, undefined, transport);
    await client.connect(transport, budget === undefined ? {} : { timeout: budget }, plan);
    const remaining = budget === undefined ? undefined : Math.max(1, started + budget - Date.now());
    const tools = await listAllTools(client, remaining === undefined ? {} : { timeout: remaining });
    const instructions = client.getInstructions();
    return {
      ok: true,
      tools: tools.map((tool) => ({
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.title !== undefined ? { title: tool.title } : {}),
        ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
      })),
      toolsFingerprint: toolsFingerprint(tools),
      ...(instructions !== undefined ? { instructions } : {}),
    };
  } catch (error) {
    const child = transport ? processOf(transport) : undefined;
    // Let the child finish writing why it failed before reading the tail.
    if (transport) await transport.close().catch(() => undefined);
    const stderr = child?.stderr.text();
    // What the server said may quote the row's secrets.
    const secrets = secretValues(row, options.env ?? process.env);
    return {
      ok: false,
      error: redactSecrets(
        stderr || withCause((error as Error).message, causeCode(error)),
        secrets,
      ),
      tools: [],
    };
  } finally {
    await client?.close().catch(() => undefined);
    await transport?.close().catch(() => undefined);
  }
}

/**
 * probe() as a pool's: its client identity and capabilities (so a server that offers some
 * tools only to clients that elicit or sample lists the pool's tools), its transports, and
 * the probe timeout of the row, else its connect timeout, else the pool's.
 */
export function probeAsPool(
  row: McpServerConfig,
  options: { probeTimeoutMs?: number; connectTimeoutMs?: number },
  context: EntryContext,
  authProvider: TransportContext["authProvider"],
): Promise<ProbeResult> {
  const timeoutMs =
    row.probeTimeoutMs ??
    row.connectTimeoutMs ??
    options.probeTimeoutMs ??
    options.connectTimeoutMs;
  const { childEnv, childMark, fetch, env, onUnsetVariable } = context.transportContext;
  return probe(row, context.clientInfo, {
    createTransport: context.createTransport,
    childEnv,
    ...(childMark ? { childMark } : {}),
    ...(fetch ? { fetch } : {}),
    ...(env ? { env } : {}),
    ...(onUnsetVariable ? { onUnsetVariable } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(authProvider ? { authProvider } : {}),
    capabilities: context.capabilities,
  });
}
