/**
 * A host that closes only its side of an MCP socket (a pipe's stdin EOF, passed on by a relay
 * that then shuts down its write side) is still owed the answers to what it asked; a host that
 * is gone is not, and its calls are cancelled upstream at once.
 */
import type { Socket } from "node:net";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { HOST_GONE_METHOD, HOST_PROBE } from "../lean/host-signals.js";

/**
 * Bound on answering what a host asked before it closed its side, ms: a call that waits on
 * that host (an elicitation it can no longer answer) must not keep the session open forever.
 */
export const HALF_CLOSE_ANSWER_MS = 30_000;

/**
 * When a half-closed host with calls due is probed (HOST_PROBE), ms after its EOF: at once
 * (a host holding the socket itself that died), then as a stock relay that got the first
 * probe has had time to fail its write to a dead host and exit (perl dies of that SIGPIPE),
 * then every PROBE_EVERY_MS until HALF_CLOSE_ANSWER_MS ends the session anyway.
 */
export const PROBE_AFTER_MS = [0, 50, 250, 1_000] as const;
/** The probe's period after PROBE_AFTER_MS, ms: a relay that notices its host late. */
export const PROBE_EVERY_MS = 3_000;

/** The part of the SDK's stdio server transport the wrappers below replace. */
interface SessionTransport {
  onmessage?: ((message: JSONRPCMessage, extra?: never) => void) | undefined;
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
}

/**
 * A host that half-closes (its stdin EOF through a pipe, which then shuts down its write side)
 * still gets the answers to every request it sent: the socket ends once the last is written,
 * at once when none is due, or after HALF_CLOSE_ANSWER_MS; then `end` runs on its close.
 * A host that is gone ends the session at once, cancelling its calls upstream: the lean bridge says so (HOST_GONE), and a relay that exited shows as a probe's
 * EPIPE (the socket's error runs `end`).
 */
export function answersBeforeEnd(
  transport: SessionTransport,
  socket: Socket,
  end: () => void,
): void {
  const due = new Set<string | number>();
  let hostDone = false;
  let timer: NodeJS.Timeout | undefined;
  let probe: NodeJS.Timeout | undefined;
  const stop = (): void => {
    clearTimeout(timer);
    clearTimeout(probe);
  };
  const finish = (): void => {
    stop();
    socket.end();
  };
  const probeFrom = (step: number): void => {
    const at = PROBE_AFTER_MS[step];
    const wait = at === undefined ? PROBE_EVERY_MS : at - (PROBE_AFTER_MS[step - 1] ?? 0);
    probe = setTimeout(() => {
      if (socket.destroyed || socket.writableEnded) return;
      socket.write(HOST_PROBE);
      probeFrom(step + 1);
    }, wait);
  };
  const received = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ("method" in message && !("id" in message) && message.method === HOST_GONE_METHOD) {
      return end();
    }
    if ("method" in message && "id" in message) due.add(message.id);
    received?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    if ("id" in message && !("method" in message) && message.id !== undefined) {
      due.delete(message.id);
      if (hostDone && due.size === 0) finish();
    }
  };
  socket.once("end", () => {
    hostDone = true;
    if (due.size === 0) return finish();
    timer = setTimeout(end, HALF_CLOSE_ANSWER_MS);
    probeFrom(0);
  });
  socket.once("close", stop);
}
