/**
 * Answers kept apart from the notifications before them, on every stdio path to a host: the
 * daemon's MCP sockets (behind a byte relay) and `mcpool bridge` on its own stdout.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";

/**
 * How long after a notification an answer is held. Between the two and the host lie a pipe
 * and maybe a byte relay (socat, `nc -U`, perl, the lean bridge), each forwarding whatever it
 * has read in one write: the gap lets the notification through on its own even when the
 * relay or the host is scheduled late on a busy machine. Only an answer that follows a
 * notification this closely waits.
 */
const NOTIFICATION_GAP_MS = 5;

/** What answersApart() wraps: a transport's send. */
export interface Sending {
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
}

/**
 * A host's SDK client handles a notification a microtask after the chunk it came in, but
 * forgets a request's progress handler as soon as it reads the answer: progress read in the
 * same chunk as the answer is lost. An answer written within NOTIFICATION_GAP_MS of a
 * notification waits out the rest of the gap, so the host reads the notifications first.
 */
export function answersApart(transport: Sending): void {
  const send = transport.send.bind(transport);
  let notifiedAt = Number.NEGATIVE_INFINITY;
  transport.send = async (message, options) => {
    if (!("id" in message)) notifiedAt = performance.now();
    else if ("result" in message || "error" in message) {
      const wait = notifiedAt + NOTIFICATION_GAP_MS - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    return send(message, options);
  };
}
