/**
 * Answers kept apart from the notifications of their own request, on every stdio path to a
 * host: the daemon's MCP sockets (behind a byte relay) and `mcpool bridge` on its own stdout.
 */
import type { Writable } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";

/** What answersApart() wraps: a transport's send. */
export interface Sending {
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
}

type RequestId = string | number;

/**
 * A host's SDK client handles a notification a microtask after the chunk it came in, but
 * forgets a request's progress handler as soon as it reads the answer: progress read in the
 * same chunk as the answer is lost. So an answer whose own request had a notification
 * written (progress, or anything else the SDK sends for that request: it names the request
 * in `relatedRequestId`) is written only once the stream has handed that notification to
 * the kernel (its write callback, reached by an empty write after it: the stream calls back
 * in order) and one more turn of the event loop has passed, in which a relay or a host
 * already waiting reads it alone. Every other answer goes at once.
 *
 * Best effort: a relay or a host scheduled late on a busy machine can still read both in one
 * chunk; nothing written on a byte stream can prevent that.
 */
export function answersApart(transport: Sending, stream: Writable): void {
  const send = transport.send.bind(transport);
  /** Requests with a notification written, each with when its latest one is out. */
  const notified = new Map<RequestId, Promise<void>>();
  transport.send = async (message, options) => {
    const request = options?.relatedRequestId;
    if (!("id" in message)) {
      if (request === undefined) return send(message, options);
      const sent = send(message, options);
      const out = written(stream);
      notified.set(request, out);
      // Once out, an answer need not wait for it: the entry goes (unless a later one replaced it).
      void out.then(() => notified.get(request) === out && notified.delete(request));
      return sent;
    }
    if (("result" in message || "error" in message) && message.id !== undefined) {
      const out = notified.get(message.id);
      if (out !== undefined) {
        notified.delete(message.id);
        await out;
      }
    }
    return send(message, options);
  };
}

/**
 * Settles once everything written to the stream so far is out of it, and one turn later; or
 * once the stream closes or can no longer write (the answer then fails as it would have).
 */
function written(stream: Writable): Promise<void> {
  if (!stream.writable) return Promise.resolve();
  return new Promise((resolve) => {
    const out = (): void => {
      stream.off("close", out);
      setImmediate(resolve);
    };
    stream.once("close", out);
    stream.write("", out);
  });
}
