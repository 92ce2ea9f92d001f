import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { McpPool, McpPoolError, type PoolEvent } from "../../src/index.js";
import { nodeRow, testPool, type PoolOptions } from "../helpers/stdio-pool.js";
import { alive, fixture, groupMembers, nextMatching, waitFor } from "../helpers/processes.js";

const node = nodeRow;

/** A pool of this test's: closed when it ends, and none of its children outlives that. */
const pool = (context: TestContext, options?: PoolOptions): McpPool =>
  testPool(context, options, (pids) => {
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });

function pidOf(p: McpPool, id: string): number {
  const pid = p.state().find((s) => s.id === id)?.pid;
  if (pid === undefined) throw new Error(`${id} has no pid`);
  return pid;
}

// Each test its own pool and children: they run side by side, each with a longer bound.
describe.concurrent("a pool of stdio children", { timeout: 90_000 }, () => {
  it("connects a row, lists its tools under qualified names and calls one", async (context) => {
    const p = pool(context);
    await p.sync([node("echo", "echo.mjs")]);
    const [state] = p.state();
    expect(state?.status).toBe("ready");
    expect(state?.pid).toBeTypeOf("number");
    expect(state?.tools.map((t) => t.qualified)).toContain("echo__echo");
    expect(state?.tools.find((t) => t.name === "add")?.qualified).toBe("echo__add");
    expect(p.tools().map((t) => t.function.name)).toEqual(state?.tools.map((t) => t.qualified));
    expect(await p.call("echo__echo", { text: "hi" })).toBe("hi");
  });

  it("starts each child in its own process group and stops the whole group, wrapper included", async (context) => {
    const p = pool(context);
    await p.sync([{ id: "wrapped", transport: "stdio", command: fixture("wrapped.sh") }]);
    const pid = pidOf(p, "wrapped");
    await waitFor(() => groupMembers(pid).length >= 2, 10_000, "the wrapper's grandchild");
    await p.stop("wrapped");
    await waitFor(() => groupMembers(pid).length === 0, 10_000, "the group to be empty");
    expect(p.state()[0]?.status).toBe("idle");
  });

  it("stops a child that ignores stdin EOF and SIGTERM with SIGKILL", async (context) => {
    const p = pool(context);
    await p.sync([node("hang", "hang.mjs")]);
    const pid = pidOf(p, "hang");
    await p.sync([]);
    expect(alive(pid)).toBe(false);
    expect(p.state()).toEqual([]);
  });

  it("collects every page of tools/list and refuses a cursor that never advances", async (context) => {
    const p = pool(context);
    await p.sync([
      node("pages", "paginate.mjs", { env: { FIXTURE_TOOLS: "10" } }),
      node("loop", "paginate.mjs", { env: { BAD_CURSOR: "1" } }),
    ]);
    const [pages, loop] = p.state();
    expect(pages?.tools.map((t) => t.name)).toEqual([
      "t0",
      "t1",
      "t2",
      "t3",
      "t4",
      "t5",
      "t6",
      "t7",
      "t8",
      "t9",
    ]);
    expect(loop?.status).toBe("error");
    expect(loop?.error).toMatch(/cursor/);
    expect(loop?.tools).toEqual([]);
  });

  it("skips junk lines on a child's stdout and still answers", async (context) => {
    const p = pool(context);
    await p.sync([node("junk", "junk.mjs")]);
    expect(await p.call("junk__echo", { text: "still here" })).toBe("still here");
  });

  it("reports a command that does not exist with its reason and holds it off with backoff", async (context) => {
    const events: PoolEvent[] = [];
    const p = pool(context);
    p.onEvent((e) => events.push(e));
    await p.sync([{ id: "nope", transport: "stdio", command: "/nonexistent/mcp-server" }]);
    const [state] = p.state();
    expect(state?.status).toBe("error");
    expect(state?.error).toMatch(/ENOENT/);
    expect(state?.retryAt).toBeGreaterThan(Date.now());
    expect(events.some((e) => e.type === "connect-failed" && e.serverId === "nope")).toBe(true);
    const refused = await p.call("nope__anything", {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpPoolError);
    expect((refused as McpPoolError).code).toBe("backoff");
    expect((refused as McpPoolError).detail.retryAt).toBe(state?.retryAt);
  });

  it("puts the stderr of a child that dies at start into its error", async (context) => {
    const p = pool(context);
    await p.sync([node("dies", "crash.mjs", { env: { CRASH_ON_START: "1" } })]);
    const [state] = p.state();
    expect(state?.status).toBe("error");
    expect(state?.error).toMatch(/no module named fixture_missing/);
    expect(state?.error).toMatch(/exited with code 1/);
  });

  it("moves a server that crashes soon after starting to error with its stderr, fails the call in flight once with server-crashed, and keeps its tools as last-known", async (context) => {
    const p = pool(context, { crashBackoffMs: 60_000 });
    await p.sync([node("crashy", "crash.mjs"), node("echo", "echo.mjs")]);
    const echoPid = pidOf(p, "echo");
    const closed = nextMatching<PoolEvent>(
      (l) => p.onEvent(l),
      (e) => e.type === "close" && e.reason === "crash",
    );
    const error = await p.call("crashy__crash", {}).catch((e: unknown) => e);
    expect((error as McpPoolError).code).toBe("server-crashed");
    expect((error as McpPoolError).message).toMatch(/may have run/);
    await closed;
    const crashy = p.state().find((s) => s.id === "crashy");
    // It never answered a call and died at once: a backoff, not an instant redial.
    expect(crashy?.status).toBe("error");
    expect(crashy?.retryAt).toBeGreaterThan(Date.now());
    expect(crashy?.error).toMatch(/fixture crashing on purpose/);
    expect(crashy?.stale).toBe(true);
    expect(crashy?.tools.map((t) => t.name)).toContain("crash");
    expect(p.tools().some((t) => t.function.name === "crashy__echo")).toBe(true);
    const refused = await p.call("crashy__echo", { text: "x" }).catch((e: unknown) => e);
    expect((refused as McpPoolError).code).toBe("backoff");
    // The other server never noticed.
    expect(pidOf(p, "echo")).toBe(echoPid);
    expect(await p.call("echo__echo", { text: "fine" })).toBe("fine");
  });

  it("times out a call that never answers, with the bound in the error", async (context) => {
    const p = pool(context);
    await p.sync([node("hang", "hang.mjs")]);
    const error = await p.call("hang__hang", {}, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect((error as McpPoolError).code).toBe("timeout");
    expect((error as McpPoolError).detail.timeoutMs).toBe(200);
  });

  it("logs no connect failure for a start ended on purpose by stop() or by closing the pool", async (context) => {
    const p = pool(context, { connectTimeoutMs: 600_000 });
    const errors: string[] = [];
    const failures: PoolEvent[] = [];
    const p2 = pool(context, {
      connectTimeoutMs: 600_000,
      log: { error: (line) => errors.push(line) },
    });
    for (const each of [p, p2]) {
      each.onEvent((e) => e.type === "connect-failed" && failures.push(e));
    }
    // A legacy pin: no spare child probes its era first, the serving child starts at once.
    const env = { HANG_ON_INIT: "1" };
    const silent = node("silent", "hang.mjs", { env, protocol: "legacy" });
    const starting = async (each: McpPool): Promise<number> => {
      let pid: number | undefined;
      await waitFor(() => (pid = each.state()[0]?.pid) !== undefined, 15_000, "a starting pid");
      return pid as number;
    };

    const syncing = p2.sync([silent]).catch(() => undefined);
    const first = await starting(p2);
    await p2.stop("silent");
    await syncing;
    expect(p2.state()[0]).toMatchObject({ status: "idle" });
    expect(p2.state()[0]?.error).toBeUndefined();
    expect(alive(first)).toBe(false);

    const closing = p.sync([silent]).catch(() => undefined);
    const second = await starting(p);
    await p.close();
    await closing;
    expect(alive(second)).toBe(false);
    expect(failures).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("passes arguments containing shell syntax literally", async (context) => {
    const p = pool(context);
    const marker = join(tmpdir(), `mcpool-pwned-${process.pid}`);
    const args = [fixture("echo.mjs"), `$(touch ${marker})`, ";", `touch ${marker}`];
    await p.sync([node("echo", "echo.mjs", { args })]);
    expect(await p.call("echo__echo", { text: "$(id); ls" })).toBe("$(id); ls");
    // No shell ran: the child got the arguments as written, and nothing was executed.
    const argv = readFileSync(`/proc/${pidOf(p, "echo")}/cmdline`, "latin1").split("\0");
    expect(argv.slice(-args.length - 1, -1)).toEqual(args);
    expect(existsSync(marker)).toBe(false);
  });
});
