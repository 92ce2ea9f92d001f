/**
 * What an integration test starts against a real daemon — homes, daemons, agents — each
 * made through a fleet and taken down when the test ends, agents first, then daemons (which
 * stop their children), then the homes. Nothing else in the test needs to remember what it
 * started. Daemons a test did not start itself — the one `mcpool restart` hands over to, one
 * an agent or a bridge started — are found by their socket and stopped with the fleet's.
 *
 * Once taken down, a fleet refuses more: a test that ran past its bound and goes on after its
 * teardown gets an error, and a daemon or agent it was still starting is taken down as it
 * arrives, so nothing outlives the test.
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
import { daemonsFor, stopAll } from "./processes.js";

/** Something a test opened that the fleet closes with the agents (a client, a bridge). */
export interface Closable {
  close(): Promise<unknown>;
}

export interface Fleet {
  /** A fresh home (socket, config and state directories), removed after the test. */
  home(prefix?: string): TestHome;
  /** `mcpool serve` on `home`, stopped after the test. */
  daemon(home: TestHome, args?: string[]): Promise<RunningDaemon>;
  /** An agent connected to `home`'s daemon, closed after the test. */
  agent(home: TestHome, name?: string, options?: Partial<ConnectOptions>): Promise<PoolClient>;
  /** A client or bridge made some other way, closed after the test with the agents. */
  keep<T extends Closable>(opened: T): T;
}

const afterTeardown = (what: string): Error =>
  new Error(`the test's fleet was already taken down (the test ran past its end): no ${what}`);

/**
 * A fleet and the teardown that takes down everything it started so far. A fleet for one
 * test stays closed after it; a file's fleet (`reused`) serves the next test again.
 */
function fleet(reused = false): { fleet: Fleet; teardown(): Promise<void> } {
  const homes: TestHome[] = [];
  const daemons: RunningDaemon[] = [];
  const opened: Closable[] = [];
  const starting = new Set<Promise<unknown>>();
  let closed = false;
  /** Runs `start` so that a teardown meanwhile waits for it (it takes itself down). */
  const tracked = <T>(start: () => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(afterTeardown("more processes"));
    const running = start();
    const settled: Promise<unknown> = running.then(
      () => starting.delete(settled),
      () => starting.delete(settled),
    );
    starting.add(settled);
    return running;
  };
  const keep = <T extends Closable>(made: T): T => {
    if (closed) {
      void made.close().catch(() => undefined);
      throw afterTeardown("more clients");
    }
    opened.push(made);
    return made;
  };
  return {
    fleet: {
      home(prefix) {
        if (closed) throw afterTeardown("more homes");
        const created = testHome(prefix);
        homes.push(created);
        return created;
      },
      daemon(home, args = []) {
        return tracked(async () => {
          const started = await startDaemon(home, args);
          if (closed) {
            await started.stop();
            throw afterTeardown("more daemons");
          }
          daemons.push(started);
          return started;
        });
      },
      agent(home, name = "agent", options = {}) {
        return tracked(async () =>
          keep(await connect({ socketPath: home.socketPath, clientName: name, ...options })),
        );
      },
      keep,
    },
    async teardown() {
      closed = true;
      await Promise.all([...starting]);
      await Promise.all(opened.splice(0).map((c) => c.close().catch(() => undefined)));
      await Promise.all(daemons.splice(0).map((d) => d.stop()));
      const left = homes.splice(0);
      await stopAll(left.flatMap((h) => daemonsFor(h.socketPath)));
      for (const h of left) h.remove();
      closed = !reused;
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
  const made = fleet(true);
  afterEach(() => made.teardown());
  return made.fleet;
}
