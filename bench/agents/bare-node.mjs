/**
 * The floor of any Node daemon: a bare process listening on a Unix socket (argv[2]) that
 * answers each newline-delimited JSON message with one of its own, and does nothing else.
 * sharing.mjs and idle.mjs measure its RSS and wakeups beside the daemon's; hop.mjs times a round trip to it.
 */
import { createServer } from "node:net";
import process from "node:process";

const sockets = new Set();
const server = createServer((socket) => {
  sockets.add(socket);
  socket.once("close", () => sockets.delete(socket));
  let buffered = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const message = JSON.parse(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      socket.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: message.params })}\n`,
      );
    }
  });
  socket.on("error", () => undefined);
});
server.listen(process.argv[2], () => process.stdout.write("ready\n"));
process.stdin.resume();
process.stdin.once("end", () => {
  server.close(() => process.exit(0));
  for (const socket of sockets) socket.destroy();
});
