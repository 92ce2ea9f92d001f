/**
 * The least a hop can cost: one newline-delimited JSON request on a Unix socket to a bare
 * Node process (agents/bare-node.mjs) and its one-line answer. No framing checks, no
 * JSON-RPC library; sequential use only.
 */
import { createConnection } from "node:net";

export function lineClient(socketPath) {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let buffered = "";
    let waiting;
    let id = 0;
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf("\n")) !== -1) {
        const message = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        const done = waiting;
        waiting = undefined;
        done?.(message);
      }
    });
    socket.once("error", reject);
    socket.once("connect", () =>
      resolve({
        request(method, params) {
          return new Promise((answer) => {
            waiting = answer;
            socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params })}\n`);
          });
        },
        close() {
          socket.destroy();
        },
      }),
    );
  });
}
