/**
 * A stdio server's era, found on a spare child (the stdio binding's "Backward
 * Compatibility"). A child may exit on any request before `initialize` (rmcp servers do),
 * so the child that will serve is never asked: a second child of the same row gets only
 * `server/discover`, within {@link SPARE_PROBE_MS}, and is closed as every child is (stdin
 * EOF, SIGTERM, SIGKILL of its group; its pid told to the pool's records). A DiscoverResult
 * naming a version both speak is a modern verdict; anything else — an error, an exit, no
 * answer — a legacy one. The spare child is no connection of the entry: its death is no
 * crash and no failure of the row.
 *
 * When: on a row's first dial without a believed verdict the serving child waits for the
 * probe (sequential: two instances of a server that takes a lock or a port never overlap);
 * a legacy verdict that is merely old (era.ts LEGACY_VERDICT_MAX_AGE_MS) is served at once
 * and probed again beside it, the new verdict taking effect on the next start.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

import type { McpServerConfig } from "../../config/rows.js";
import {
  asDiscoverResult,
  envelopeMeta,
  MODERN_PROTOCOL_VERSION,
  mutualModernVersion,
  probeFailure,
  usableVerdict,
  type EraVerdict,
} from "../core/era.js";
import { readResult } from "../mcp/input-required.js";
import { McpProtocol } from "../mcp/protocol.js";
import { serverLog } from "../core/server-log.js";
import { causeCode, withCause } from "../core/causes.js";
import { ErrorCode, isMcpError } from "../core/mcp-error.js";
import type { EntryContext } from "./context.js";

/** Bound on a spare child's `server/discover`, ms (the connect budget when that is shorter). */
export const SPARE_PROBE_MS = 5_000;

/**
 * Whether a dial of `row` on `verdict` finds the era on a spare child: `first` (the serving
 * child waits for it), `beside` (an old legacy verdict: served legacy now, probed beside),
 * or undefined (a pin, a believed verdict, not a stdio child the pool spawns itself).
 */
export function spareProbeOf(
  row: McpServerConfig,
  verdict: EraVerdict | undefined,
  context: EntryContext,
  now: number,
): "first" | "beside" | undefined {
  if (context.spareProbe !== true || row.transport !== "stdio") return undefined;
  if ((row.protocol ?? "auto") !== "auto" || usableVerdict(verdict, now)) return undefined;
  // A child handed over keeps the era it was found to speak: nothing to probe.
  if (context.transportContext.handed?.has(row)) return undefined;
  return verdict?.era === "legacy" ? "beside" : "first";
}

/** The protocol alone: a spare child is asked one request and answers none of its own. */
class Asker extends McpProtocol {
  open(transport: Transport): Promise<void> {
    return this.attach(transport);
  }
}

/**
 * Starts a spare child of `row`, asks it `server/discover` (once more at a version a -32022
 * names), closes it and resolves with the verdict. Never rejects: whatever fails is legacy.
 */
export async function probeOnSpare(
  row: McpServerConfig,
  context: EntryContext,
  budget: number | undefined,
): Promise<EraVerdict> {
  const bound = Math.min(SPARE_PROBE_MS, budget ?? SPARE_PROBE_MS);
  const log = serverLog(context.log, row.id);
  let transport: Transport | undefined;
  let verdict: EraVerdict | undefined;
  let why = `no DiscoverResult within ${bound} ms`;
  try {
    // Its stdout noise is the serving child's to report: the spare's is not logged.
    const { onJunk: _junk, handed: _handed, ...quiet } = context.transportContext;
    transport = await context.createTransport(row, quiet);
    const asker = new Asker();
    await asker.open(transport);
    let version = MODERN_PROTOCOL_VERSION;
    for (let attempt = 0; attempt < 2 && verdict === undefined; attempt++) {
      const meta = { protocolVersion: version, clientInfo: context.clientInfo };
      const request = {
        method: "server/discover",
        params: { _meta: envelopeMeta({ ...meta, clientCapabilities: context.capabilities }, {}) },
      };
      let result: unknown;
      try {
        result = await asker.request(request, { timeout: bound });
      } catch (error) {
        const failure = probeFailure(error, undefined);
        why = failedProbe(error, bound);
        if (typeof failure === "string") break;
        version = failure.retryAt;
        continue;
      }
      const read = readResult("server/discover", result);
      const discover = read.kind === "complete" ? asDiscoverResult(read.result) : undefined;
      const mutual = discover ? mutualModernVersion(discover.supportedVersions) : undefined;
      if (discover === undefined || mutual === undefined) {
        why = "server/discover answered no version both speak";
        break;
      }
      verdict = { era: "modern", version: mutual, discover, at: Date.now() };
    }
  } catch (error) {
    why = withCause("the spare child did not start", causeCode(error));
  } finally {
    await transport?.close().catch(() => undefined);
  }
  if (verdict?.era === "modern")
    log.info(`speaks the modern era (${verdict.version}), found on a spare child`);
  else log.info(`speaks the legacy era, found on a spare child (${why})`);
  return verdict ?? { era: "legacy", at: Date.now() };
}

/** Why a spare child's answer is no modern evidence, without what it said (it may quote secrets). */
function failedProbe(error: unknown, bound: number): string {
  if (isMcpError(error, ErrorCode.ConnectionClosed)) return "it exited without an answer";
  if (isMcpError(error, ErrorCode.RequestTimeout)) return `no answer within ${bound} ms`;
  if (isMcpError(error)) return `server/discover answered error ${error.code}`;
  return withCause("server/discover failed", causeCode(error));
}
