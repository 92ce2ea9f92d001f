/**
 * The yardstick for the daemon's hop: the least a relay process can do. It owns
 * stdio MCP children (argv[3…] is the command; `BARE_RELAY_CHILDREN` of them, default one),
 * initializes them, listens on a Unix socket (argv[2]) and forwards each newline-delimited
 * JSON-RPC request to a child under a fresh id, and each answer back to the connection that
 * asked under the id it asked with. A tool named `<n>__<tool>` goes to child n as `<tool>`
 * (the daemon's qualified names, at their barest); any other name goes to the first child.
 * No validation, no schema, no routing of anything else. hop.mjs, throughput.mjs and call-scale.mjs time it beside the
 * daemon.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import process from "node:process";

const [socketPath, command, ...args] = process.argv.slice(2);
const count = Number(process.env.BARE_RELAY_CHILDREN ?? 1);

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

/** One stdio child, initialized; resolves once it answered initialize. */
function startChild() {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
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
  return ready.then(() => {
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`,
    );
    return child;
  });
}

const children = await Promise.all(Array.from({ length: count }, startChild));

/** The child a request goes to: the `<n>__` prefix of its tool's name, taken off. */
function childFor(message) {
  const name = message.params?.name;
  const cut = typeof name === "string" ? name.indexOf("__") : -1;
  if (cut === -1) return children[0];
  message.params.name = name.slice(cut + 2);
  return children[Number(name.slice(0, cut))] ?? children[0];
}

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
    childFor(message).stdin.write(`${JSON.stringify(message)}\n`);
  });
});
server.listen(socketPath, () => process.stdout.write("ready\n"));
process.stdin.resume();
process.stdin.once("end", () => {
  for (const socket of sockets) socket.destroy();
  server.close();
  let left = children.length;
  for (const child of children) {
    child.once("exit", () => --left === 0 && process.exit(0));
    child.kill();
  }
});
