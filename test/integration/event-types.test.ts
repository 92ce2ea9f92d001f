/**
 * `pool/subscribe` with `eventTypes`: a connection that asked for some event
 * types is written no other; a bridge asks for the list-changing ones and so is sent no
 * `call` event for every call made through the pool.
 */
import { createConnection, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { PROTOCOL_VERSION, type PoolEvent } from "mcpool-client";
import { useFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";

// Before the hook below: vitest runs after-hooks last-first, so this teardown comes last.
const fleet = useFleet();
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
});

/** A raw wire connection: every frame the daemon writes, in order, and a request sender. */
async function wire(socketPath: string) {
  const socket = createConnection(socketPath);
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  const frames: Record<string, unknown>[] = [];
  let buffered = "";
  socket.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let newline;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      frames.push(JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>);
      buffered = buffered.slice(newline + 1);
    }
  });
  let lastId = 0;
  const request = async (method: string, params: object): Promise<Record<string, unknown>> => {
    const id = ++lastId;
    socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    await waitFor(() => frames.some((frame) => frame.id === id), 10_000);
    return frames.find((frame) => frame.id === id)!;
  };
  return { frames, request };
}

const eventsIn = (frames: readonly Record<string, unknown>[]): PoolEvent[] =>
  frames.filter((frame) => frame.method === "event").map((frame) => frame.params as PoolEvent);

describe("pool/subscribe with eventTypes", () => {
  it("writes a connection only the event types it asked for", async () => {
    const h = fleet.home();
    h.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
    await fleet.daemon(h);
    const agent = await fleet.agent(h, "agent");
    const heard: PoolEvent[] = [];
    const everything: PoolEvent[] = [];
    agent.onEvent((event) => heard.push(event), { types: ["close"] });
    agent.onEvent((event) => everything.push(event));
    expect(await agent.call("echo__echo", { text: "warm" })).toBe("warm");

    const raw = await wire(h.socketPath);
    await raw.request("hello", { protocolVersion: PROTOCOL_VERSION, clientName: "raw", pid: 1 });
    await raw.request("pool/subscribe", { events: true, eventTypes: ["close"] });
    // A call event is emitted before the call's answer is written: had it been sent to this
    // connection, it would be among the frames before the answer.
    const answer = await raw.request("tools/call", {
      name: "echo__echo",
      arguments: { text: "x" },
    });
    expect(answer.result).toBeDefined();
    await raw.request("server/stop", { id: "echo" });
    await waitFor(() => eventsIn(raw.frames).some((event) => event.type === "close"), 10_000);
    expect(eventsIn(raw.frames).map((event) => event.type)).toEqual(["close"]);

    // On the client: the typed listener hears its type alone, the other one every type.
    await waitFor(() => heard.length > 0, 10_000);
    expect(heard.map((event) => event.type)).toEqual(["close"]);
    expect(everything.some((event) => event.type === "call")).toBe(true);
  });
});
