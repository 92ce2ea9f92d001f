/**
 * The yardstick for the daemon's hop (issue 16): the least a relay process can do. It owns
 * one stdio MCP child (argv[3…]), initializes it, listens on a Unix socket (argv[2]) and
 * forwards each newline-delimited JSON-RPC request to the child under a fresh id, and each
 * answer back to the connection that asked under the id it asked with. No validation, no
 * schema, no routing of anything else. P1 and P3 time it beside the daemon.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import process from "node:process";

const [socketPath, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });

/** Our id → [the connection that asked, the id it asked with]. */
const pending = new Map();
let nextId = 0;

/** Calls `onLine` with each complete line of a stream, as a string. */
function lines(stream, onLine) {
  let buffered = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.length > 0) onLine(line);
    }
  });
}

let initialized;
const ready = new Promise((resolve) => (initialized = resolve));
lines(child.stdout, (line) => {
  const message = JSON.parse(line);
  if (message.id === "init") return initialized();
  const asked = pending.get(message.id);
  if (asked === undefined) return;
  pending.delete(message.id);
  message.id = asked[1];
  asked[0].write(`${JSON.stringify(message)}\n`);
});
child.stdin.write(
  `${JSON.stringify({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bare-relay", version: "0" },
    },
  })}\n`,
);
await ready;
child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);

const sockets = new Set();
const server = createServer((socket) => {
  sockets.add(socket);
  socket.once("close", () => sockets.delete(socket));
  socket.on("error", () => undefined);
  lines(socket, (line) => {
    const message = JSON.parse(line);
    const id = ++nextId;
    pending.set(id, [socket, message.id]);
    message.id = id;
    child.stdin.write(`${JSON.stringify(message)}\n`);
  });
});
server.listen(socketPath, () => process.stdout.write("ready\n"));
process.stdin.resume();
process.stdin.once("end", () => {
  for (const socket of sockets) socket.destroy();
  server.close();
  child.kill();
  child.once("exit", () => process.exit(0));
});
