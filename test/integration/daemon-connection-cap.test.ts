/**
 * The connection cap (a service left running for weeks: one process
 * opening connections until the fd limit): past `mcpool.maxConnections` a new connection is
 * refused with a JSON-RPC error line saying so, on the daemon's socket and on its MCP sockets,
 * while the clients already in, `mcpool status` and config reloads keep working; once the
 * flood closes, the daemon holds nothing for it. Under a low open-file limit the cap is half
 * that limit, so a flood meets the refusal, never EMFILE.
 */
import { connect as netConnect, type Socket } from "node:net";
import { PROTOCOL_VERSION, type DaemonStatus } from "mcpool-protocol";
import type { PoolClient } from "mcpool-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mcpSocketPath } from "../../src/bridge/lean/mcp-socket-paths.js";
import {
  client as poolClient,
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";

const CAP = 12;

const echo = (name = "echo"): Record<string, unknown> => ({
  [name]: { command: process.execPath, args: [fixture("echo.mjs")] },
});

/** A raw connection and the lines it has been sent; `hello`: it says hello as `name`. */
interface Raw {
  socket: Socket;
  lines: string[];
  closed: Promise<void>;
}

function rawConnection(path: string, hello?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(path);
    const lines: string[] = [];
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      lines.push(...parts.filter((line) => line !== ""));
    });
    const closed = new Promise<void>((done) => socket.once("close", () => done()));
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.off("error", reject);
      socket.on("error", () => undefined);
      if (hello !== undefined) {
        const params = { protocolVersion: PROTOCOL_VERSION, clientName: hello, pid: process.pid };
        socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "hello", params })}\n`);
      }
      resolve({ socket, lines, closed });
    });
  });
}

async function statusOf(home: TestHome): Promise<DaemonStatus> {
  const result = runCli(home, "status", "--json");
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as DaemonStatus;
}

describe("a daemon at its connection cap", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  const open: Raw[] = [];
  const clients: PoolClient[] = [];
  /** Whether the MCP sockets' own client has connected (it stays): one more connection. */
  let mcpClient = false;

  beforeAll(async () => {
    home = testHome("mcpool-cap-");
    // This one process opens every connection: its share is the whole cap.
    home.writeConfig(echo(), { mcpool: { maxConnections: CAP, maxConnectionsPerProcess: CAP } });
    daemon = await startDaemon(home);
    const pool = await poolClient(home);
    try {
      await waitFor(async () => (await pool.state())[0]?.status === "ready", 30_000, "echo");
    } finally {
      await pool.close();
    }
  });

  afterEach(async () => {
    for (const raw of open.splice(0)) raw.socket.destroy();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    // Each test starts from an empty daemon: the `status` asking, and the MCP sockets' client.
    const idle = 1 + (mcpClient ? 1 : 0);
    await waitFor(async () => (await statusOf(home)).connections!.open === idle, 10_000, "idle");
  });

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  it("refuses a connection over the cap with an error line, and lets the CLI and the clients in work", async () => {
    for (let i = 0; i < CAP; i++) clients.push(await poolClient(home, `flood-${i}`));

    // One more agent: refused at its hello, with the cap and the fix.
    const refused = poolClient(home, "one-too-many");
    await expect(refused).rejects.toThrow(
      new RegExp(
        `too many connections \\(${CAP} of ${CAP}(, \\d+ of them held by process ${process.pid} \\(.*\\))?\\); close some or raise mcpool.maxConnections`,
      ),
    );
    await expect(refused).rejects.toMatchObject({ code: "pool-full" });

    // `mcpool call` says the cap, not "is the daemon running?".
    const call = runCli(home, "call", "echo__echo", '{"text":"hi"}');
    expect(call.code).not.toBe(0);
    expect(call.stderr).toContain("too many connections");
    expect(call.stderr).not.toContain("is the daemon running");

    // The clients in keep working, and `status` gets in on a reserved slot and shows the cap.
    await expect(clients[0]!.call("echo__echo", { text: "still" })).resolves.toBe("still");
    const text = runCli(home, "status");
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`limits  ${CAP + 1} of ${CAP} connections open; \\d+ refused`),
    );
    const status = await statusOf(home);
    expect(status.connections?.max).toBe(CAP);
    expect(status.connections?.refused).toBeGreaterThanOrEqual(2);

    // A config edit is still picked up.
    home.writeConfig(
      { ...echo(), ...echo("second") },
      { mcpool: { maxConnections: CAP, maxConnectionsPerProcess: CAP } },
    );
    await waitFor(
      async () =>
        (await clients[0]!.state()).some((s) => s.id === "second" && s.status === "ready"),
      30_000,
      "the added row to serve",
    );
  });

  it("refuses at once, before hello, when even the reserved slots are taken", async () => {
    for (let i = 0; i < CAP; i++) clients.push(await poolClient(home, `flood-${i}`));
    // Silent connections fill the reserved slots until their (short) hello bound.
    for (let i = 0; i < 8; i++) open.push(await rawConnection(home.socketPath));
    const late = await rawConnection(home.socketPath);
    open.push(late);
    await late.closed;
    expect(late.lines).toHaveLength(1);
    const line = JSON.parse(late.lines[0]!) as { id: unknown; error: { message: string } };
    expect(line.id).toBeNull();
    expect(line.error.message).toContain(`too many connections (${CAP} of ${CAP}`);
  });

  it("refuses an MCP socket session over the cap with a JSON-RPC error line", async () => {
    const path = mcpSocketPath(home.socketPath, undefined) as string;
    // The MCP sockets' own client takes a place once the first session arrives.
    const first = await rawConnection(path);
    open.push(first);
    mcpClient = true;
    await waitFor(
      async () => (await statusOf(home)).connections!.open >= 3,
      10_000,
      "the first session",
    );
    for (let i = 0; open.length < CAP - 1; i++) open.push(await rawConnection(path));
    const late = await rawConnection(path);
    open.push(late);
    await late.closed;
    const line = JSON.parse(late.lines[0]!) as { id: unknown; error: { message: string } };
    expect(line.id).toBeNull();
    expect(line.error.message).toContain(`too many connections (${CAP} of ${CAP}`);
  });

  it("holds no connection of a flood once it has closed", async () => {
    for (let i = 0; i < CAP; i++) open.push(await rawConnection(home.socketPath, `flood-${i}`));
    for (let i = 0; i < 4; i++)
      open.push(await rawConnection(mcpSocketPath(home.socketPath, undefined)!));
    await Promise.all(open.splice(0).map((raw) => (raw.socket.destroy(), raw.closed)));
    // Left: the `status` asking and the MCP sockets' own client.
    await waitFor(
      async () => (await statusOf(home)).connections!.open === 2,
      10_000,
      "the count to fall",
    );
    expect((await statusOf(home)).clients).toBe(2);
  });
});

describe("a daemon under a low open-file limit", () => {
  let home: TestHome;
  let daemon: RunningDaemon;

  beforeAll(async () => {
    home = testHome("mcpool-fdcap-");
    // This one process opens every connection: its share is the whole cap.
    home.writeConfig(echo(), { mcpool: { maxConnectionsPerProcess: 1000 } });
    // Node raises its soft limit to the hard one: set both.
    daemon = await startDaemon(home, [], { wrap: ["prlimit", "--nofile=128:128"] });
  });

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  it("caps connections at half the limit, so a flood meets a refusal, not EMFILE", async () => {
    const flood: Raw[] = [];
    try {
      for (let i = 0; i < 100; i++) flood.push(await rawConnection(home.socketPath, `flood-${i}`));
      const refused = flood.at(-1)!;
      await refused.closed;
      expect(refused.lines.join("\n")).toContain(
        "too many connections (64 of 64, half the daemon's open-file limit of 128",
      );
      // The daemon lives, reads an edited config, and `status` gets in.
      home.writeConfig(echo("second"), { mcpool: { maxConnectionsPerProcess: 1000 } });
      await waitFor(
        async () => (await statusOf(home)).servers.some((s) => s.id === "second"),
        30_000,
        "the edited config to be read",
      );
      // The daemon's own lines: a server's child inherits the 128-file limit too, and Node
      // loading the SDK's many modules at once may itself meet EMFILE there (its stderr is
      // logged under its id) — that is the child's limit, not the daemon's accept.
      const own = daemon
        .stderr()
        .split("\n")
        .filter((line) => !/ mcpool: (echo|second): /.test(line));
      expect(own.join("\n")).not.toContain("EMFILE");
    } finally {
      await Promise.all(flood.map((raw) => (raw.socket.destroy(), raw.closed)));
    }
    await waitFor(
      async () => (await statusOf(home)).connections!.open === 1,
      10_000,
      "the count to fall",
    );
  });
});
