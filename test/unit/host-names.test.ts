/**
 * The names hosts' sessions go by on the daemon's MCP sockets: taken from an entry's first line
 * (which goes no further), and given back when the connection closes. Every session there
 * shares one connection to the daemon, so a name a live session goes by is not taken again:
 * another host never owns its records. Nor is a name that could be guessed, nor one that is
 * not the first line; the log says why, never the name.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import type { HostName } from "../../src/bridge/core/session.js";
import { HostNames } from "../../src/bridge/fronts/host-names.js";
import { hostNameLine } from "../../src/bridge/lean/host-signals.js";

type Message = Record<string, unknown>;

const NAME = "0123456789abcdef0123456789abcdef";
const INITIALIZE = { jsonrpc: "2.0", id: 1, method: "initialize", params: {} };

/** One connection's session: what the bridge was passed, the host's name, and the log. */
function session(names: HostNames): {
  host: HostName;
  passed: Message[];
  logged: string[];
  socket: Socket;
  send(message: Message): void;
} {
  const passed: Message[] = [];
  const logged: string[] = [];
  const transport: { onmessage?: (message: never) => void } = {
    onmessage: (message) => void passed.push(message),
  };
  const host: HostName = {};
  const socket = new Socket();
  names.take(transport as never, socket, host, (why) => void logged.push(why));
  return {
    host,
    passed,
    logged,
    socket,
    send: (message) => transport.onmessage?.(message as never),
  };
}

const named = (name: unknown): Message => JSON.parse(hostNameLine(name as string)) as Message;

describe("the host names of the MCP sockets' sessions", () => {
  it("takes the first line's name, passes it no further, and gives it back on close", async () => {
    const names = new HostNames();
    const first = session(names);
    first.send(named(NAME));
    first.send(INITIALIZE);
    expect(first.host).toEqual({ name: NAME });
    expect(first.passed).toEqual([INITIALIZE]);
    expect(first.logged).toEqual([]);

    // A second live session naming the same host: the name is the first one's.
    const second = session(names);
    second.send(named(NAME));
    expect(second.host).toEqual({});
    expect(second.logged).toEqual([
      "an entry's host name is not taken (a live session here goes by it); its session goes by its own",
    ]);

    first.socket.destroy();
    await once(first.socket, "close");
    const third = session(names);
    third.send(named(NAME));
    expect(third.host).toEqual({ name: NAME });
  });

  it("takes no name that could be guessed, nor one after the first line, and says why alone", () => {
    const names = new HostNames();
    const short = session(names);
    short.send(named("host-a"));
    const late = session(names);
    late.send(INITIALIZE);
    late.send(named(NAME));
    const odd = session(names);
    odd.send(named(`${NAME}/..`));
    const typed = session(names);
    typed.send(named("0".repeat(32)));
    const dashes = session(names);
    dashes.send(named("-".repeat(32)));
    const long = session(names);
    long.send(named(`${NAME}${NAME}`));
    const unknown = [typed, dashes, long];
    for (const one of [short, late, odd, ...unknown]) expect(one.host).toEqual({});
    expect(late.passed).toEqual([INITIALIZE]);
    expect([
      ...short.logged,
      ...late.logged,
      ...odd.logged,
      ...unknown.flatMap((one) => one.logged),
    ]).toEqual([
      "an entry's host name is not taken (it is not a random UUID or 32 hex digits); its session goes by its own",
      "an entry's host name is not taken (it was not the connection's first line); its session goes by its own",
      "an entry's host name is not taken (it is not a random UUID or 32 hex digits); its session goes by its own",
      ...unknown.map(
        () =>
          "an entry's host name is not taken (it is not a random UUID or 32 hex digits); its session goes by its own",
      ),
    ]);
  });

  it("takes the names the entries make: a random UUID, and 16 random bytes in hex", () => {
    const names = new HostNames();
    const uuid = session(names);
    uuid.send(named(randomUUID()));
    const hex = session(names);
    hex.send(named(randomBytes(16).toString("hex")));
    for (const one of [uuid, hex]) expect(one.logged).toEqual([]);
    expect(uuid.host.name).toMatch(/^[0-9a-f-]{36}$/);
    expect(hex.host.name).toMatch(/^[0-9a-f]{32}$/);
  });
});
