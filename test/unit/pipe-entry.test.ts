/**
 * The pipe entries `mcpool wire` writes, read back: the relay file's argv
 * (`perl …/mcpool-pipe.pl ID SOCKET NODE`) and the older spellings that name the server's
 * MCP socket are all "already wired" for `wire` and `import`, and name their server.
 */
import { describe, expect, it } from "vitest";
import { bridgeEntryOf, isBridgeBody } from "../../src/cli/hosts/entries.js";
import {
  isPipeEntry,
  pipeCandidates,
  pipeEntryServer,
  relayArgs,
  RELAY_FILE,
} from "../../src/cli/hosts/pipe-entry.js";

const SOCKET = "/run/user/1000/mcpool/mcpool.sock";

describe("pipe entries", () => {
  it("tries the relay first, then socat and nc, each naming the daemon's socket or the server's", () => {
    expect(pipeCandidates(SOCKET, "echo")).toEqual([
      { tool: "perl", args: [RELAY_FILE, "echo", SOCKET, process.execPath] },
      { tool: "socat", args: ["STDIO", "UNIX-CONNECT:/run/user/1000/mcpool/mcp/echo.sock"] },
      { tool: "nc", args: ["-U", "/run/user/1000/mcpool/mcp/echo.sock"] },
    ]);
    expect(pipeCandidates(SOCKET, "../x")).toEqual([]);
  });

  it("reads the server back from the relay's argv and from the older spellings", () => {
    expect(pipeEntryServer(relayArgs("echo", SOCKET, "/usr/bin/node"))).toBe("echo");
    expect(pipeEntryServer(["-e", "socket(S,1,1,0)…", "/run/m/mcp/memory.sock"])).toBe("memory");
    expect(pipeEntryServer(["STDIO", "UNIX-CONNECT:/run/m/mcp/fs.sock"])).toBe("fs");
    expect(pipeEntryServer(["-y", "@modelcontextprotocol/server-memory"])).toBeUndefined();
    expect(isPipeEntry(["/opt/mcpool/relay/mcpool-pipe.pl", "echo", SOCKET])).toBe(true);
  });

  it("counts a relay entry as wired to its server, and the pool's own sockets as no server's", () => {
    const relay = { command: "/usr/bin/perl", args: relayArgs("echo", SOCKET) };
    expect(isBridgeBody(relay)).toBe(true);
    expect(bridgeEntryOf(relay)).toEqual({ serverId: "echo", catalog: false });
    expect(bridgeEntryOf({ command: "perl", args: relayArgs("@pool", SOCKET) })).toBeUndefined();
  });
});
