/**
 * What an integration test starts against a real daemon — homes, daemons, agents — each
 * made through a fleet and taken down when the test ends, agents first, then daemons (which
 * stop their children), then the homes. Nothing else in the test needs to remember what it
 * started.
 *
 * `testFleet(context)` inside a test: the fleet of that test alone, taken down in its own
 * `onTestFinished`, so the tests of a file can run side by side (`describe.concurrent`), each
 * with its own home and daemon. A file whose own per-test teardown must come after the
 * fleet's registers it before calling testFleet (finish hooks run last-first).
 *
 * `useFleet()` at the top of a file: one fleet for the file, taken down in an `afterEach`;
 * for files whose tests run one after another. Vitest runs after-hooks last-first: a file
 * whose own teardown must come after the fleet's (a remote server the daemons still talk to)
 * calls useFleet() after its afterEach, one whose teardown must come first (SIGCONT to a
 * stopped child) calls it before.
 */
import { connect, type ConnectOptions, type PoolClient } from "mcpool-client";
import { afterEach, type TestContext } from "vitest";
import { startDaemon, testHome, type RunningDaemon, type TestHome } from "./daemon.js";

export interface Fleet {
  /** A fresh home (socket, config and state directories), removed after the test. */
  home(prefix?: string): TestHome;
  /** `mcpool serve` on `home`, stopped after the test. */
  daemon(home: TestHome, args?: string[]): Promise<RunningDaemon>;
  /** An agent connected to `home`'s daemon, closed after the test. */
  agent(home: TestHome, name?: string, options?: Partial<ConnectOptions>): Promise<PoolClient>;
  /** A client made some other way, closed after the test with the agents. */
  keep(client: PoolClient): PoolClient;
}

/** A fleet and the teardown that takes down everything it started so far. */
function fleet(): { fleet: Fleet; teardown(): Promise<void> } {
  const homes: TestHome[] = [];
  const daemons: RunningDaemon[] = [];
  const clients: PoolClient[] = [];
  const keep = (client: PoolClient): PoolClient => {
    clients.push(client);
    return client;
  };
  return {
    fleet: {
      home(prefix) {
        const created = testHome(prefix);
        homes.push(created);
        return created;
      },
      async daemon(home, args = []) {
        const started = await startDaemon(home, args);
        daemons.push(started);
        return started;
      },
      async agent(home, name = "agent", options = {}) {
        return keep(await connect({ socketPath: home.socketPath, clientName: name, ...options }));
      },
      keep,
    },
    async teardown() {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
      await Promise.all(daemons.splice(0).map((d) => d.stop()));
      for (const h of homes.splice(0)) h.remove();
    },
  };
}

/** The fleet of one test, taken down when that test finishes (concurrent tests included). */
export function testFleet({ onTestFinished }: Pick<TestContext, "onTestFinished">): Fleet {
  const made = fleet();
  onTestFinished(() => made.teardown());
  return made.fleet;
}

/** One fleet for a file whose tests run one after another, taken down after each test. */
export function useFleet(): Fleet {
  const made = fleet();
  afterEach(() => made.teardown());
  return made.fleet;
}
