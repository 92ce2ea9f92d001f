/**
 * Binding a socket by rename (bindByRename, mcpool-client/paths), as the daemon's socket and
 * its MCP sockets are bound: each bind has a temporary name of its own, so binds at once in
 * one folder, even where the temporary name is the short one in the folder, never meet. A
 * listener whose path another took over is retired (retireListener): what it had queued is
 * served before it closes.
 */
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bindByRename, listenOn, retireListener } from "mcpool-client/paths";
import { afterEach, describe, expect, it } from "vitest";

const LIMIT = 107;

const made: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise<void>((done) => server.close(() => done()))),
  );
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder whose sockets' paths are `bytes` long when named like `name`. */
function folderFor(bytes: number, name = "x.sock"): string {
  const base = mkdtempSync(join(tmpdir(), "mcpool-bind-"));
  made.push(base);
  const dir = join(base, "d".repeat(bytes - base.length - name.length - 2));
  mkdirSync(dir);
  return dir;
}

/** A server that greets each connection with `name`. */
function greeter(name: string): Server {
  const server = createServer((socket) => socket.end(name));
  servers.push(server);
  return server;
}

/** What the socket at `path` says first. */
function greeting(path: string): Promise<string> {
  return new Promise((done, fail) => {
    let said = "";
    const socket = connect(path);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (said += chunk));
    socket.on("end", () => done(said));
    socket.on("error", fail);
  });
}

describe("binding a socket by rename", () => {
  it("two binds at once in one folder both succeed, each at its own path", async () => {
    // 100 bytes: a temporary name beside the path (17 bytes more) would not fit, both take
    // the short one.
    const dir = folderFor(100);
    const a = join(dir, "a.sock");
    const b = join(dir, "b.sock");
    expect(Buffer.byteLength(a)).toBe(100);
    const [boundA, boundB] = await Promise.all([
      bindByRename(greeter("a"), a, LIMIT),
      bindByRename(greeter("b"), b, LIMIT),
    ]);
    expect(await greeting(a)).toBe("a");
    expect(await greeting(b)).toBe("b");
    expect(statSync(a).ino).toBe(boundA.ino);
    expect(statSync(b).ino).toBe(boundB.ino);
  });

  // `mcpool.sock`: only the hidden temporary name in its folder fits. `a.sock`, the shortest
  // name a server id gives an MCP socket: neither that nor the name beside it fits, the bare
  // tag does. Each must fit at every bind of a process, however many it made before.
  for (const name of ["mcpool.sock", "a.sock"]) {
    it(`binds a socket path at the limit (\`${name}\`) again and again, leaving only the socket`, async () => {
      const dir = folderFor(LIMIT, name);
      const path = join(dir, name);
      expect(Buffer.byteLength(path)).toBe(LIMIT);
      for (let bind = 1; bind <= 25; bind += 1) {
        const server = greeter(`bind ${bind}`);
        const { ino } = await bindByRename(server, path, LIMIT);
        expect(await greeting(path)).toBe(`bind ${bind}`);
        expect(statSync(path).ino).toBe(ino);
        expect(readdirSync(dir)).toEqual([name]);
        await new Promise<void>((done) => server.close(() => done()));
      }
    });
  }

  it("serves a host that connected to a listener before its path was taken over, then closes it", async () => {
    const dir = folderFor(60);
    const path = join(dir, "a.sock");
    const old = greeter("old");
    await bindByRename(old, path, LIMIT);
    const fresh = greeter("new");
    const temporary = join(dir, "fresh.tmp");
    await listenOn(fresh, temporary);
    // In one turn of the event loop, which therefore accepts nothing meanwhile: a host
    // connects (a socket's connect is made at once, and waits in the old listener's backlog),
    // the path is taken over, and the old listener is retired.
    const first = greeting(path);
    renameSync(temporary, path);
    const retired = retireListener(old);
    expect(await first).toBe("old");
    await retired;
    expect(old.listening).toBe(false);
    expect(await greeting(path)).toBe("new");
  });
});
