/**
 * What an integration test starts against a real daemon — homes, daemons, agents — each
 * made through the fleet and taken down after every test, agents first, then daemons (which
 * stop their children), then the homes. `const fleet = useFleet()` at the top of a file
 * registers the teardown; nothing else in the file needs to remember what it started.
 * Vitest runs after-hooks last-first: a file whose own teardown must come after the fleet's
 * (a remote server the daemons still talk to) calls useFleet() after its afterEach, one whose
 * teardown must come first (SIGCONT to a stopped child) calls it before.
 */
import { connect, type ConnectOptions, type PoolClient } from "mcpool-client";
import { afterEach } from "vitest";
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

export function useFleet(): Fleet {
  const homes: TestHome[] = [];
  const daemons: RunningDaemon[] = [];
  const clients: PoolClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
    await Promise.all(daemons.splice(0).map((d) => d.stop()));
    for (const h of homes.splice(0)) h.remove();
  });
  const keep = (client: PoolClient): PoolClient => {
    clients.push(client);
    return client;
  };
  return {
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
  };
}
