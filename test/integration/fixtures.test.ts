/**
 * The fixture servers in test/fixtures/ and the package's echo server do what their headers say.
 * Fixtures run as real children, through the SDK's StdioClientTransport where it is enough, and
 * spawned here in their own process group where a test needs the exit code or must SIGKILL the
 * group. afterEach kills and reaps every child and checks its pid is gone (ESRCH).
 */
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { setImmediate, setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ErrorCode, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ECHO_TOOL_NAMES, echoServer } from "../../src/demo/echo-server.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
// Bound on waiting for something that does happen; when it does not, the test fails this late.
const EVENT_BOUND_MS = 5_000;
// How long a fixture must stay silent (or alive) to count as not answering (or not exiting).
const SILENCE_MS = 300;
const MIB = 1024 * 1024;

const cleanups: Array<() => Promise<void>> = [];
// Children of this process: reaped by the time their cleanup resolves.
const children: number[] = [];

afterEach(async () => {
  const results = await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
  for (const pid of children.splice(0)) expect(processExists(pid), `pid ${pid}`).toBe(false);
  for (const result of results) if (result.status === "rejected") throw result.reason;
});

describe("echoServer", () => {
  it("lists its five tools with JSON-Schema inputs, echo marked read-only", async () => {
    const client = await connectInMemory(
      echoServer({ name: "echo-under-test", instructions: "say it back" }),
    );
    const { tools } = await client.listTools();

    expect(tools.map((tool) => tool.name)).toEqual([...ECHO_TOOL_NAMES]);
    for (const tool of tools) {
      expect(tool.description).toBeTruthy();
      expect(tool.inputSchema.type).toBe("object");
    }
    expect(tools.find((tool) => tool.name === "echo")?.annotations).toEqual({ readOnlyHint: true });
    expect(client.getServerVersion()?.name).toBe("echo-under-test");
    expect(client.getInstructions()).toBe("say it back");
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
  });

  it("answers echo, add, fail and pid as documented", async () => {
    const client = await connectInMemory(echoServer());

    expect(await callText(client, "echo", { text: "hi" })).toBe("hi");
    expect(await callText(client, "add", { a: 1, b: 2 })).toBe('add({"a":1,"b":2})');
    expect(await callText(client, "pid")).toBe(String(process.pid));
    expect(await client.callTool({ name: "fail", arguments: { message: "nope" } })).toEqual({
      isError: true,
      content: [{ type: "text", text: "nope" }],
    });
    expect(await client.callTool({ name: "fail" })).toEqual({
      isError: true,
      content: [{ type: "text", text: "failed" }],
    });
  });

  it("rejects an unknown tool and a wrongly typed argument with InvalidParams", async () => {
    const client = await connectInMemory(echoServer());

    await expect(client.callTool({ name: "nope" })).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
    });
    await expect(client.callTool({ name: "echo", arguments: { text: 1 } })).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
    });
  });

  it("sleeps for ms, clears a cancelled sleep's timer, and keeps serving", async () => {
    const client = await connectInMemory(echoServer());
    const timers = (): number =>
      process.getActiveResourcesInfo().filter((resource) => resource === "Timeout").length;
    const before = timers();
    const cancel = new AbortController();

    const cancelled = client.callTool({ name: "sleep", arguments: { ms: 60_000 } }, undefined, {
      signal: cancel.signal,
    });
    await setImmediate();
    // The client's request timeout and the server's sleep.
    expect(timers()).toBe(before + 2);
    cancel.abort();

    await expect(cancelled).rejects.toThrow();
    await setImmediate();
    // At most as many as before: the count is the process's, and a timer of something else
    // (an earlier test's) may have ended meanwhile; a sleep left armed would be one more.
    expect(timers()).toBeLessThanOrEqual(before);
    expect(await callText(client, "sleep", { ms: 5 })).toBe("slept 5");
  });
});

describe("echo.mjs", () => {
  it("answers echo, add, sleep and pid over stdio", async () => {
    const { client, pid } = await connectStdio("echo.mjs");

    expect(await callText(client, "echo", { text: "hi" })).toBe("hi");
    expect(await callText(client, "add", { a: 1, b: 2 })).toBe('add({"a":1,"b":2})');
    expect(await callText(client, "sleep", { ms: 5 })).toBe("slept 5");
    expect(await callText(client, "pid")).toBe(String(pid));
  });

  it("serves FIXTURE_TOOLS extra tools that answer their own names", async () => {
    const { client } = await connectStdio("echo.mjs", { env: { FIXTURE_TOOLS: "5" } });
    const { tools } = await client.listTools();

    expect(tools.map((tool) => tool.name)).toEqual([
      ...["echo", "add", "sleep", "pid"],
      ...["tool_0", "tool_1", "tool_2", "tool_3", "tool_4"],
    ]);
    expect(await callText(client, "tool_3")).toBe("tool_3");
  });

  it("exits 0 by itself when its stdin ends", async () => {
    const fixture = spawnGroup("echo.mjs");
    const exited = once(fixture.child, "exit");

    fixture.child.stdin.end();

    expect(await within(exited, "exit after stdin EOF")).toEqual([0, null]);
  });
});

describe("crash.mjs", () => {
  it("exits 3 with its reason on stderr when crash is called, failing the call", async () => {
    const fixture = spawnGroup("crash.mjs");
    const client = await connectOver(fixture.child);
    const exited = once(fixture.child, "exit");

    await expect(client.callTool({ name: "crash" })).rejects.toMatchObject({
      code: ErrorCode.ConnectionClosed,
    });
    expect(await exited).toEqual([3, null]);
    expect(fixture.stderr()).toContain("fixture crashing on purpose");
  });

  it("with CRASH_ON_START=1 exits 1 before initialize, the import error on stderr", async () => {
    const fixture = spawnGroup("crash.mjs", { CRASH_ON_START: "1" });
    const exited = once(fixture.child, "exit");

    await expect(connectOver(fixture.child)).rejects.toMatchObject({
      code: ErrorCode.ConnectionClosed,
    });
    expect(await exited).toEqual([1, null]);
    expect(fixture.stderr()).toContain("boom: no module named fixture_missing");
  });
});

describe("hang.mjs", () => {
  it("never answers hang, so the request times out, and still answers echo", async () => {
    const client = await connectOver(spawnGroup("hang.mjs").child);

    await expect(
      client.callTool({ name: "hang" }, undefined, { timeout: SILENCE_MS }),
    ).rejects.toMatchObject({ code: ErrorCode.RequestTimeout });
    expect(await callText(client, "echo", { text: "still here" })).toBe("still here");
  });

  it("outlives SIGTERM and stdin EOF, and dies by SIGKILL to its group", async () => {
    const fixture = spawnGroup("hang.mjs");
    const client = await connectOver(fixture.child);

    process.kill(fixture.pid, "SIGTERM");
    expect(await callText(client, "pid")).toBe(String(fixture.pid));
    fixture.child.stdin.end();
    // Proving an exit does not happen takes a wait; SILENCE_MS is far longer than EOF handling.
    await delay(SILENCE_MS);
    expect(fixture.child.exitCode).toBeNull();

    await fixture.killGroup();
    expect(fixture.child.signalCode).toBe("SIGKILL");
  });

  it("with HANG_ON_INIT=1 never answers initialize", async () => {
    const fixture = spawnGroup("hang.mjs", { HANG_ON_INIT: "1" });

    await expect(connectOver(fixture.child, { timeout: SILENCE_MS })).rejects.toMatchObject({
      code: ErrorCode.RequestTimeout,
    });
  });
});

describe("junk.mjs", () => {
  it("answers through the junk lines, which reach the client as parse errors", async () => {
    const errors: Error[] = [];
    const { client } = await connectStdio("junk.mjs", {
      beforeConnect: (c) => (c.onerror = (error) => errors.push(error)),
    });

    expect(await callText(client, "echo", { text: "clean" })).toBe("clean");
    // Two junk lines before serving, two before the answer; the SDK skips each bad line.
    expect(errors).toHaveLength(4);
    for (const error of errors) expect(error).toBeInstanceOf(SyntaxError);
  });
});

describe("paginate.mjs", () => {
  it("lists its 10 default tools 3 per page, the last page without a cursor", async () => {
    const { client } = await connectStdio("paginate.mjs");

    const pages = await listAllPages(client);

    expect(pages.map((page) => page.length)).toEqual([3, 3, 3, 1]);
    expect(pages.flat()).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));
  });

  it("ends on a full page when FIXTURE_TOOLS is a multiple of 3", async () => {
    const { client } = await connectStdio("paginate.mjs", { env: { FIXTURE_TOOLS: "6" } });

    expect((await listAllPages(client)).map((page) => page.length)).toEqual([3, 3]);
  });

  it('with BAD_CURSOR=1 hands back "same" as the next cursor forever', async () => {
    const { client } = await connectStdio("paginate.mjs", { env: { BAD_CURSOR: "1" } });

    const first = await client.listTools();
    const second = await client.listTools({ cursor: first.nextCursor });

    expect(first.nextCursor).toBe("same");
    expect(second.nextCursor).toBe("same");
    expect(second.tools).toEqual(first.tools);
  });
});

describe("list-changed.mjs", () => {
  it("announces added and removed tools; an added tool answers its own name", async () => {
    const { client } = await connectStdio("list-changed.mjs");
    let notified = nextListChanged(client);

    expect(await callText(client, "add_tool", { name: "fresh" })).toBe("added fresh");
    await within(notified, "list_changed after add_tool");
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("fresh");
    expect(await callText(client, "fresh")).toBe("fresh");

    notified = nextListChanged(client);
    expect(await callText(client, "remove_tool", { name: "fresh" })).toBe("removed fresh");
    await within(notified, "list_changed after remove_tool");
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("fresh");
  });
});

describe("stderr-flood.mjs", () => {
  it("writes mb MiB to a drained stderr, then answers flooded", async () => {
    const { client, transport } = await connectStdio("stderr-flood.mjs");
    let bytes = 0;
    const allBytes = new Promise<void>((resolve) => {
      transport.stderr?.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes >= 2 * MIB) resolve();
      });
    });

    expect(await callText(client, "flood", { mb: 2 })).toBe("flooded");
    await within(allBytes, "2 MiB on stderr");
    expect(bytes).toBe(2 * MIB);
  });

  it("never answers while the parent leaves its stderr undrained", async () => {
    const { client } = await connectStdio("stderr-flood.mjs", { drainStderr: false });

    await expect(
      client.callTool({ name: "flood", arguments: { mb: 1 } }, undefined, { timeout: SILENCE_MS }),
    ).rejects.toMatchObject({ code: ErrorCode.RequestTimeout });
  });
});

describe("wrapped.sh", () => {
  it("serves from a node grandchild in the sh's process group, and SIGKILL to the group ends both", async () => {
    const fixture = spawnGroup("wrapped.sh");
    const client = await connectOver(fixture.child);
    const grandchild = Number(await callText(client, "pid"));

    expect(grandchild).not.toBe(fixture.pid);
    expect(processGroupOf(grandchild)).toBe(fixture.pid);

    await fixture.killGroup();
    expect(fixture.child.signalCode).toBe("SIGKILL");
    await vi.waitFor(() => expect(isRunning(grandchild)).toBe(false), {
      timeout: EVENT_BOUND_MS,
      interval: 10,
    });
  });
});

interface StdioFixture {
  client: Client;
  transport: StdioClientTransport;
  pid: number;
}

/** Starts `file` through the SDK's StdioClientTransport, stderr piped and (by default) drained. */
async function connectStdio(
  file: string,
  {
    env = {},
    drainStderr = true,
    beforeConnect,
  }: {
    env?: Record<string, string>;
    drainStderr?: boolean;
    /** Sees the Client before the handshake, e.g. to set onerror. */
    beforeConnect?: (client: Client) => void;
  } = {},
): Promise<StdioFixture> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [FIXTURES + file],
    env,
    stderr: "pipe",
  });
  // transport.stderr is typed as a bare Stream; a 'data' listener is what makes it flow.
  if (drainStderr) transport.stderr?.on("data", ignore);
  const client = new Client({ name: "fixtures-test", version: "1.0.0" });
  beforeConnect?.(client);
  cleanups.push(async () => {
    // A child blocked writing stderr would not see stdin EOF, and close() would wait 4 s for it.
    transport.stderr?.on("data", ignore);
    await client.close();
  });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error(`${file} has no pid after connect`);
  children.push(pid);
  return { client, transport, pid };
}

interface GroupFixture {
  child: ChildProcessWithoutNullStreams;
  pid: number;
  stderr(): string;
  /** SIGKILLs the process group and resolves once the direct child is reaped. Idempotent. */
  killGroup(): Promise<void>;
}

/**
 * Runs `file` as an executable (its shebang) leading a new process group, so killGroup can
 * SIGKILL every process it started. The SDK transport spawns into our own group, where `-pid`
 * would name no group, and it does not report exit codes.
 */
function spawnGroup(file: string, env: Record<string, string> = {}): GroupFixture {
  const child = spawn(FIXTURES + file, [], {
    detached: true,
    stdio: "pipe",
    env: { PATH: process.env.PATH, ...env },
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not spawn ${file}`);
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const killGroup = async (): Promise<void> => {
    const exited =
      child.exitCode === null && child.signalCode === null ? once(child, "exit") : undefined;
    try {
      process.kill(-pid, "SIGKILL");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
    await exited;
  };
  cleanups.push(killGroup);
  children.push(pid);
  return { child, pid, stderr: () => stderr, killGroup };
}

/**
 * Connects a Client over a child's stdout and stdin. StdioServerTransport is the SDK's
 * newline-delimited JSON-RPC over any (readable, writable) pair, so it serves the client side
 * too; it does not watch the child, so it is closed here when the child's pipes close, which
 * fails pending requests with ConnectionClosed.
 */
async function connectOver(
  child: ChildProcessWithoutNullStreams,
  options?: RequestOptions,
): Promise<Client> {
  const transport = new StdioServerTransport(child.stdout, child.stdin);
  child.once("close", () => void transport.close());
  child.stdin.on("error", (error) => transport.onerror?.(error));
  const client = new Client({ name: "fixtures-test", version: "1.0.0" });
  await client.connect(transport, options);
  return client;
}

async function connectInMemory(server: Server): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: "fixtures-test", version: "1.0.0" });
  await client.connect(clientTransport);
  cleanups.push(() => client.close());
  return client;
}

function ignore(): void {}

/** Calls `name` and returns its single text content, failing on anything else. */
async function callText(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError).toBeFalsy();
  expect(result.content).toEqual([{ type: "text", text: expect.any(String) }]);
  return (result.content as Array<{ text: string }>)[0]!.text;
}

/** Follows nextCursor to the end; returns each page's tool names. */
async function listAllPages(client: Client): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  // The page cap stops a cursor that never advances (BAD_CURSOR) from looping forever.
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    pages.push(page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined && pages.length < 100);
  return pages;
}

function nextListChanged(client: Client): Promise<void> {
  return new Promise((resolve) => {
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
  });
}

/** Resolves with `promise`, or rejects after EVENT_BOUND_MS naming what never happened. */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no ${what} within ${EVENT_BOUND_MS} ms`)),
      EVENT_BOUND_MS,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Signal 0 checks existence without signalling; ESRCH means no such process. */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/**
 * Whether `pid` exists and has not exited. An orphan is reparented to PID 1, and in some
 * sandboxes PID 1 never reaps, so a dead grandchild can stay a zombie that still answers signal 0.
 */
function isRunning(pid: number): boolean {
  if (!processExists(pid)) return false;
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  // proc(5): "pid (comm) state ...", and comm may itself contain ") ".
  const text = readFileSync(stat, "utf8");
  return text[text.lastIndexOf(")") + 2] !== "Z";
}

function processGroupOf(pid: number): number {
  return Number(execFileSync("ps", ["-o", "pgid=", "-p", String(pid)], { encoding: "utf8" }));
}
