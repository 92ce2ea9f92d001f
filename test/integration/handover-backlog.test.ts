/**
 * No connection is lost at the sockets during a hand-over restart: once the new daemon has
 * been started with the listening sockets, the old one stops listening, so a connection that
 * arrives before the new one listens waits in the socket's backlog and is served by the new
 * daemon. The client here is a plain socket that never dials again — what `socat` or
 * `nc -U` is to a host. The window is held open by the "installed" code the restart starts:
 * it waits for this test's word before it runs the daemon. If the hand-over fails, the old
 * daemon listens again and serves.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROTOCOL_VERSION } from "mcpool-protocol";
import { INITIALIZE } from "../../src/cli/hosts/pipe-entry.js";
import { scopeSocket } from "../helpers/bridge.js";
import { type RunningDaemon, type TestHome } from "../helpers/daemon.js";
import { cleanupsAtEnd, gatedDaemon, heldRestart, type restart } from "../helpers/handover-gate.js";
import { testFleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

const counter = { command: process.execPath, args: [fixture("counter.mjs")] };

/** A socket that speaks newline-delimited JSON, and is never dialled again. */
class LineClient {
  readonly #lines: unknown[] = [];
  #buffer = "";
  #wake: (() => void) | undefined;
  #closed = false;

  /** `cleanups`: the test's, which destroy the socket when it ends. */
  constructor(
    readonly socket: Socket,
    cleanups: (() => void)[],
  ) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.#buffer += chunk;
      let at: number;
      while ((at = this.#buffer.indexOf("\n")) >= 0) {
        this.#lines.push(JSON.parse(this.#buffer.slice(0, at)));
        this.#buffer = this.#buffer.slice(at + 1);
      }
      this.#wake?.();
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.#closed = true;
      this.#wake?.();
    });
    cleanups.push(() => socket.destroy());
  }

  static dial(path: string, cleanups: (() => void)[]): LineClient {
    return new LineClient(createConnection(path), cleanups);
  }

  send(message: unknown): void {
    this.socket.write(`${JSON.stringify(message)}\n`);
  }

  /** The next message with this id; rejects if the connection closes first. */
  answer(id: number): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const look = (): void => {
        const found = this.#lines.findIndex((line) => (line as { id?: unknown }).id === id);
        if (found >= 0) {
          this.#wake = undefined;
          resolve(this.#lines.splice(found, 1)[0] as Record<string, unknown>);
        } else if (this.#closed) {
          reject(new Error(`the connection closed before the answer to request ${id}`));
        }
      };
      this.#wake = look;
      look();
    });
  }
}

/** The MCP session's opening and one `count` call, sent at once, as a pipe's host sends them. */
function openAndCount(client: LineClient, id: number): void {
  client.socket.write(INITIALIZE);
  client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  client.send({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "count", arguments: {} },
  });
}

const textOf = (answer: Record<string, unknown>): string =>
  ((answer.result as { content: { text: string }[] }).content[0] as { text: string }).text;

/**
 * One count on the counter's MCP socket, then a restart, up to the window: the new daemon
 * started and waiting at the gate, the old one no longer listening.
 */
async function countedThenRestarting(
  cleanups: (() => void)[],
  h: TestHome,
  old: RunningDaemon,
  started: Promise<Socket>,
): Promise<{
  mcpSocket: string;
  pid: string | undefined;
  restarting: ReturnType<typeof restart>;
  gate: Socket;
}> {
  const mcpSocket = scopeSocket(h, ["--server", "counter"]);
  await waitFor(() => existsSync(mcpSocket), 15_000, "the MCP socket");
  const before = LineClient.dial(mcpSocket, cleanups);
  openAndCount(before, 2);
  const [one, pid] = textOf(await before.answer(2)).split(" ");
  expect(one).toBe("1");
  const { restarting, gate } = await heldRestart(h, old, started);
  return { mcpSocket, pid, restarting, gate };
}

// Each test its own home, daemon and gate: they run side by side, each with a longer bound.
describe.concurrent(
  "a hand-over restart and connections that arrive meanwhile",
  { timeout: 90_000 },
  () => {
    it("serves a connection made while the new daemon is not yet listening, on the MCP socket and the daemon's", async (context) => {
      const fleet = testFleet(context);
      const cleanups = cleanupsAtEnd(context);
      const h = fleet.home();
      h.writeConfig({ counter });
      const { old, started } = await gatedDaemon(h, cleanups);
      try {
        const { mcpSocket, pid, restarting, gate } = await countedThenRestarting(
          cleanups,
          h,
          old,
          started,
        );

        // Dialled now, as socat dials: once, whoever listens.
        const during = LineClient.dial(mcpSocket, cleanups);
        openAndCount(during, 2);
        const daemonPeer = LineClient.dial(h.socketPath, cleanups);
        daemonPeer.send({
          jsonrpc: "2.0",
          id: 1,
          method: "hello",
          params: { protocolVersion: PROTOCOL_VERSION, clientName: "raw", pid: process.pid },
        });
        daemonPeer.send({ jsonrpc: "2.0", id: 2, method: "daemon/status", params: {} });
        gate.end("go\n");

        const done = await restarting;
        expect(done.stderr).toBe("");
        expect(done.code).toBe(0);
        const handed = JSON.parse(done.stdout) as { pid: number };
        expect(textOf(await during.answer(2))).toBe(`2 ${pid}`);
        const status = await daemonPeer.answer(2);
        expect((status.result as { pid: number }).pid).toBe(handed.pid);
        await waitFor(() => !alive(old.pid), 20_000, "the old daemon to exit");
      } finally {
        await old.stop();
        await stopAll(daemonsFor(h.socketPath));
      }
    });

    it("binds nothing over the new daemon's MCP sockets when mcp.json changes meanwhile", async (context) => {
      const fleet = testFleet(context);
      const cleanups = cleanupsAtEnd(context);
      const h = fleet.home();
      h.writeConfig({ counter });
      const { old, started } = await gatedDaemon(h, cleanups);
      try {
        const { mcpSocket, pid, restarting, gate } = await countedThenRestarting(
          cleanups,
          h,
          old,
          started,
        );
        // A row added while the new daemon waits: the old one leaves it (and its MCP socket) to
        // the new one, whose child says so before it runs the counter.
        const marker = join(h.dir, "added-row-started");
        const script = `: > "$0"; exec "$1" "$2"`;
        const args = ["-c", script, marker, process.execPath, fixture("counter.mjs")];
        h.writeConfig({ counter, added: { command: "/bin/sh", args } });
        gate.end("go\n");

        const done = await restarting;
        expect(done.code).toBe(0);
        await waitFor(() => !alive(old.pid), 20_000, "the old daemon to exit");
        await waitFor(() => existsSync(marker), 20_000, "the new daemon to start the added row");
        // The path is the socket the new daemon listens on, not one the old daemon bound and took
        // with it.
        const after = LineClient.dial(mcpSocket, cleanups);
        openAndCount(after, 2);
        expect(textOf(await after.answer(2))).toBe(`2 ${pid}`);
      } finally {
        await old.stop();
        await stopAll(daemonsFor(h.socketPath));
      }
    });

    it("stops as a daemon stops when it cannot listen again after the new daemon failed", async (context) => {
      const fleet = testFleet(context);
      const cleanups = cleanupsAtEnd(context);
      const h = fleet.home();
      h.writeConfig({ counter });
      const { old, started } = await gatedDaemon(h, cleanups);
      try {
        const { pid, restarting, gate } = await countedThenRestarting(cleanups, h, old, started);
        // A folder with something in it where the socket was: no socket can be renamed over it,
        // not even by root, and the keeper leaves a path that holds something alone.
        rmSync(h.socketPath);
        mkdirSync(h.socketPath);
        writeFileSync(join(h.socketPath, "in-the-way"), "");
        gate.end("fail\n");

        const done = await restarting;
        expect(done.code).toBe(1);
        expect(done.stderr).toContain("could not listen on its socket again");
        // Not a daemon serving no one: it stopped, and its child with it.
        await waitFor(() => old.process.exitCode !== null, 30_000, "the old daemon to exit");
        expect(old.process.exitCode).not.toBe(0);
        expect(old.stderr()).toContain(
          "the daemon stopped: it could not listen on its socket again",
        );
        await waitFor(() => !alive(Number(pid)), 20_000, "the counter's child to be stopped");
      } finally {
        rmSync(h.socketPath, { recursive: true, force: true });
        await old.stop();
        await stopAll(daemonsFor(h.socketPath));
      }
    });

    it("listens again when the new daemon cannot start: a connection after it is served", async (context) => {
      const fleet = testFleet(context);
      const cleanups = cleanupsAtEnd(context);
      const h = fleet.home();
      h.writeConfig({ counter });
      const { old, started } = await gatedDaemon(h, cleanups);
      try {
        const { mcpSocket, pid, restarting, gate } = await countedThenRestarting(
          cleanups,
          h,
          old,
          started,
        );
        gate.end("fail\n");

        const done = await restarting;
        expect(done.code).toBe(1);
        expect(done.stderr).toContain("the new daemon did not take over");
        // Bound again by rename: the same path, listened on by the daemon that serves on.
        const after = LineClient.dial(mcpSocket, cleanups);
        openAndCount(after, 2);
        expect(textOf(await after.answer(2))).toBe(`2 ${pid}`);
        const agent = await fleet.agent(h, "after");
        expect((await agent.status()).pid).toBe(old.pid);
      } finally {
        await old.stop();
        await stopAll(daemonsFor(h.socketPath));
      }
    });
  },
);
