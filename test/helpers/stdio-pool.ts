/** Pools of real stdio children for integration tests: rows running fixtures, and a tracker. */
import { afterEach, type TestContext } from "vitest";
import { McpPool, type McpServerConfig } from "../../src/index.js";
import { alive, fixture, waitFor } from "./processes.js";

export type PoolOptions = Partial<ConstructorParameters<typeof McpPool>[0]>;

/** A stdio row that runs `test/fixtures/<script>` with this Node. */
export function nodeRow(
  id: string,
  script: string,
  extra: Partial<McpServerConfig> = {},
): McpServerConfig {
  return {
    id,
    transport: "stdio",
    command: process.execPath,
    args: [fixture(script)],
    ...extra,
  } as McpServerConfig;
}

/** Silent pools on a 15 s connect budget; `made` lists them so afterEach can close them. */
export function poolMaker(): { pool(options?: PoolOptions): McpPool; made: McpPool[] } {
  const made: McpPool[] = [];
  return {
    made,
    pool(options = {}) {
      const created = new McpPool({
        clientName: "mcpool-test",
        log: {},
        connectTimeoutMs: 15_000,
        ...options,
      });
      made.push(created);
      return created;
    },
  };
}

/**
 * A silent pool on a 15 s connect budget for one test, so the tests of a file can run side
 * by side: closed when the test ends, then `closed` is given the pids its servers had.
 */
export function testPool(
  { onTestFinished }: Pick<TestContext, "onTestFinished">,
  options: PoolOptions = {},
  closed: (pids: number[]) => void | Promise<void> = () => undefined,
): McpPool {
  const made = poolMaker().pool(options);
  onTestFinished(async () => {
    const pids = made.state().flatMap((s) => (s.pid ? [s.pid] : []));
    await made.close();
    await closed(pids);
  });
  return made;
}

/**
 * One silent pool at a time that counts the children it spawns (`spawned`, their pids in
 * order). Called in a describe block: after each of its tests the pool is closed and every
 * child it spawned is waited out, 15 s at the most each.
 */
export function childCountingPool(): {
  spawned: number[];
  open(options?: PoolOptions): McpPool;
  close(): Promise<void>;
} {
  let pool: McpPool | undefined;
  const spawned: number[] = [];
  const close = async (): Promise<void> => {
    await pool?.close();
    pool = undefined;
  };
  afterEach(async () => {
    await close();
    for (const pid of spawned.splice(0)) {
      await waitFor(() => !alive(pid), 15_000, `child ${pid} to exit`);
    }
  });
  return {
    spawned,
    close,
    open(options = {}) {
      pool = new McpPool({
        clientName: "mcpool-test",
        log: {},
        ...options,
        onChild: (event) => {
          if (event.type === "spawn") spawned.push(event.pid);
        },
      });
      return pool;
    },
  };
}
