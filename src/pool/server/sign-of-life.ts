/**
 * A server's next sign of life on one connection: a line on its stderr, a notification or a
 * request of its own — not a reply to us. A server that asked for its roots shows it has
 * taken the answer in this way (server-filesystem says so on stderr once it has checked
 * the directories; server-everything sends a log notification), so a project's child
 * serves after it (profile-entry.ts), whatever the machine's load.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { processOf } from "../transport/transport.js";
import type { Connection } from "./connection.js";

/**
 * Resolves true on the next sign of life of `connection`'s server, false when the
 * connection closes first or after `boundMs` (a server that asks and then says nothing).
 */
export function signOfLife(connection: Connection, boundMs: number): Promise<boolean> {
  const transport = connection.transport;
  const child = processOf(transport);
  return new Promise<boolean>((resolve) => {
    const prior = transport.onmessage;
    const priorClose = transport.onclose;
    let done = false;
    const end = (shown: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child?.stderrWatchers.delete(onStderr);
      if (transport.onmessage === onMessage) transport.onmessage = prior;
      if (transport.onclose === onClose) transport.onclose = priorClose;
      resolve(shown);
    };
    const onStderr = (): void => end(true);
    const onMessage: typeof prior = (message, extra) => {
      if (!isReply(message)) end(true);
      prior?.(message, extra);
    };
    const onClose = (): void => {
      end(false);
      priorClose?.();
    };
    const timer = setTimeout(() => end(false), boundMs);
    timer.unref();
    child?.stderrWatchers.add(onStderr);
    transport.onmessage = onMessage;
    transport.onclose = onClose;
  });
}

function isReply(message: JSONRPCMessage): boolean {
  return !("method" in message);
}
