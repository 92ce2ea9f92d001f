/**
 * `mcpool restart` hands the MCP sockets over as listening sockets, as it does the daemon's:
 * the same socket (same inode) goes on being listened on, never unlinked and bound again, and
 * a host behind the lean bridge answers its next call through it. Under systemd, the old
 * daemon tells the service manager the new main pid: read here on a datagram socket of our
 * own, as systemd reads `$NOTIFY_SOCKET`.
 */
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scopeSocket, stdioBridge } from "../helpers/bridge.js";
import { runCli } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

const fleet = useFleet();

const counter = { command: process.execPath, args: [fixture("counter.mjs")] };

/** What systemd does with `$NOTIFY_SOCKET`: binds a datagram socket, prints each message. */
const NOTIFY_LISTENER = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("listening", flush=True)
while True:
    print(s.recv(4096).decode().replace("\\n", " "), flush=True)
`;

describe("a hand-over restart and the MCP sockets", () => {
  it("keeps each MCP socket listening, same inode, and removes them at the shutdown after", async () => {
    const h = fleet.home();
    h.writeConfig({ counter });
    try {
      await fleet.daemon(h);
      const server = scopeSocket(h, ["--server", "counter"]);
      const pool = scopeSocket(h, []);
      await waitFor(() => existsSync(server) && existsSync(pool), 15_000, "the MCP sockets");
      const inodes = [statSync(server).ino, statSync(pool).ino];
      const host = await stdioBridge(h, ["--server", "counter"], {}, "lean");
      try {
        const count = async (): Promise<string> => {
          const result = await host.client.callTool({ name: "count", arguments: {} });
          return (result.content as { text: string }[])[0]?.text ?? "";
        };
        const [one, pid] = (await count()).split(" ");
        expect(one).toBe("1");

        const restart = runCli(h, "restart", "--json");
        expect(restart.stderr).toBe("");
        expect(restart.code).toBe(0);
        const handed = JSON.parse(restart.stdout) as { pid: number };

        // Never unlinked and bound again: the very sockets the old daemon listened on.
        expect([statSync(server).ino, statSync(pool).ino]).toEqual(inodes);
        expect(await count()).toBe(`2 ${pid}`);
        const agent = await fleet.agent(h, "after");
        expect((await agent.status()).pid).toBe(handed.pid);

        expect(runCli(h, "shutdown").code).toBe(0);
        await waitFor(() => !alive(handed.pid), 20_000, "the new daemon to end");
        expect(existsSync(server)).toBe(false);
        expect(existsSync(pool)).toBe(false);
      } finally {
        await host.close();
      }
    } finally {
      await stopAll(daemonsFor(h.socketPath));
    }
  });

  it("tells systemd the new daemon's pid on $NOTIFY_SOCKET (MAINPID=)", async () => {
    const h = fleet.home();
    h.writeConfig({ counter });
    const notifySocket = join(h.dir, "notify.sock");
    h.env.NOTIFY_SOCKET = notifySocket;
    const listener = spawn("python3", ["-c", NOTIFY_LISTENER, notifySocket], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let heard = "";
    listener.stdout.on("data", (chunk: Buffer) => (heard += chunk.toString()));
    try {
      await waitFor(() => heard.includes("listening"), 15_000, "the notify socket");
      const old = await fleet.daemon(h);
      const restart = runCli(h, "restart", "--json");
      expect(restart.stderr).toBe("");
      expect(restart.code).toBe(0);
      const handed = JSON.parse(restart.stdout) as { pid: number };
      expect(handed.pid).not.toBe(old.pid);
      await waitFor(() => heard.includes("MAINPID="), 15_000, "the MAINPID message");
      expect(heard.split("\n")).toContain(`MAINPID=${handed.pid}`);
      expect(old.stderr()).not.toContain("the service manager may not track the new daemon");
    } finally {
      listener.kill();
      await stopAll(daemonsFor(h.socketPath));
    }
  });
});
