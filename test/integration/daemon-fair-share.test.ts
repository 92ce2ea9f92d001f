/**
 * A fair share of the connection cap: one process that opens connection after connection,
 * each past hello and then idle, is held to its share of `mcpool.maxConnections` (told so,
 * with its pid and command), while the CLI and an agent of another process get in. When the
 * cap is full all the same, an agent using mcpool-client is refused at `connect()` with the
 * coded error it can catch, and the CLI says so once, under one `mcpool:` prefix.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { PROTOCOL_VERSION } from "mcpool-protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  runCli,
  serversReady,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture } from "../helpers/processes.js";

const echo = { echo: { command: process.execPath, args: [fixture("echo.mjs")] } };

interface Flood {
  child: ChildProcess;
  held: number;
  refused: string[];
}

/** A process of its own opening `count` connections, keeping each it is let in on. */
async function flood(home: TestHome, count: number, name = "flood"): Promise<Flood> {
  const child = spawn(process.execPath, [fixture("flood.mjs")], {
    env: {
      ...home.env,
      FLOOD_COUNT: String(count),
      FLOOD_PROTOCOL: String(PROTOCOL_VERSION),
      FLOOD_NAME: name,
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => (out += chunk));
  while (!out.includes("\n")) {
    const [chunk] = (await Promise.race([
      once(child.stdout!, "data"),
      once(child, "exit").then(() => {
        throw new Error(`the flood ended early: ${out}`);
      }),
    ])) as unknown[];
    void chunk;
  }
  const { held, refused } = JSON.parse(out.split("\n")[0]!) as { held: number; refused: string[] };
  return { child, held, refused };
}

/** An agent process using mcpool-client: its one JSON line, and how it exited. */
async function agent(home: TestHome): Promise<{ line: Record<string, unknown>; code: number }> {
  const child = spawn(process.execPath, [fixture("pool-agent.mjs")], {
    env: home.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number];
  expect(out, err).not.toBe("");
  return { line: JSON.parse(out.split("\n")[0]!) as Record<string, unknown>, code };
}

describe("one process hoarding connections", () => {
  let home: TestHome | undefined;
  let daemon: RunningDaemon | undefined;
  const floods: Flood[] = [];

  afterEach(async () => {
    for (const { child } of floods.splice(0)) {
      if (child.exitCode !== null) continue;
      child.stdin!.end();
      await once(child, "exit");
    }
    await daemon?.stop();
    home?.remove();
  });

  it("is held to its share, named in the refusal, while the CLI and another agent get in", async () => {
    home = testHome("mcpool-share-");
    // 40 connections, a process's share a quarter of them.
    home.writeConfig(echo, { mcpool: { maxConnections: 40 } });
    daemon = await startDaemon(home);
    await serversReady(home);

    const hoarder = await flood(home, 60);
    floods.push(hoarder);
    expect(hoarder.held).toBe(10);
    expect(hoarder.refused).toHaveLength(50);
    const pid = hoarder.child.pid!;
    expect(hoarder.refused[0]).toContain(`process ${pid} (`);
    expect(hoarder.refused[0]).toContain("flood.mjs");
    expect(hoarder.refused[0]).toContain("mcpool.maxConnectionsPerProcess");

    const call = runCli(home, "call", "echo__echo", '{"text":"hi"}');
    expect(call.stderr).toBe("");
    expect(call.code).toBe(0);
    const { line, code } = await agent(home);
    expect(code).toBe(0);
    expect(line).toMatchObject({ ok: true, answer: "agent" });
  });

  it("refuses an agent's connect() with the coded error when the cap is full, and the CLI with one prefix", async () => {
    home = testHome("mcpool-share-full-");
    // A share as large as the cap: one process may fill it.
    home.writeConfig(echo, { mcpool: { maxConnections: 12, maxConnectionsPerProcess: 12 } });
    daemon = await startDaemon(home);
    await serversReady(home);

    const hoarder = await flood(home, 12);
    floods.push(hoarder);
    expect(hoarder.held).toBe(12);

    // Refused at its hello, on a reserved slot.
    const atHello = await agent(home);
    expect(atHello.line).toMatchObject({ ok: false, code: "pool-full" });
    expect(atHello.line.message).toContain("too many connections (12 of 12");
    expect(atHello.code).toBe(0);
    const call = runCli(home, "call", "echo__echo", '{"text":"hi"}');
    expect(call.code).not.toBe(0);
    // Named once the daemon has looked (the reserved slot's hello waits for that).
    expect(call.stderr).toMatch(
      new RegExp(
        `^mcpool: too many connections \\(12 of 12, 12 of them held by process ${hoarder.child.pid} \\(.*flood\\.mjs\\)\\)`,
      ),
    );
    expect(call.stderr).not.toContain("mcpool: mcpool:");

    // The reserved slots taken too: refused before its hello, with the same coded error.
    const reserved = await flood(home, 8, "mcpool-cli/status");
    floods.push(reserved);
    expect(reserved.held).toBe(8);
    const beforeHello = await agent(home);
    expect(beforeHello.line).toMatchObject({ ok: false, code: "pool-full" });
    expect(beforeHello.code).toBe(0);
  });
});
