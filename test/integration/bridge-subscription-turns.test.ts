/**
 * The bridge's resource subscriptions, one URI shared by two host sessions, against a real
 * daemon and server (test/fixtures/log-levels.mjs): session A subscribes, unsubscribes and
 * session B subscribes, all before the first subscribe is answered. Direct, B is subscribed
 * at the end and hears the next update; so must it be through the bridge, whose router
 * holds one upstream subscription per URI for all its sessions (an unsubscribe that waited
 * for its subscribe's answer must not cancel the subscription B asked for meanwhile). And a
 * session that closes while its subscribe still waits its turn holds nothing: once the
 * subscribe before it is answered, the last session's unsubscribe ends the URI upstream; one
 * that closes while its subscribe looks for the URI's server (a listing) subscribes nothing.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ResourcesPromptsRouter,
  type Subscriber,
} from "../../src/bridge/core/resources-prompts.js";
import { scopeOf } from "../../src/bridge/core/naming.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";

const fleet = useFleet();
const BOUND_MS = 20_000;

/** A daemon serving test/fixtures/log-levels.mjs (with `args`), and a router for its `talk`. */
async function routed(
  args: string[] = [],
  scope = scopeOf({ server: "talk" }),
): Promise<{ router: ResourcesPromptsRouter; call(name: string): Promise<unknown> }> {
  const home = fleet.home();
  const talk = { command: process.execPath, args: [fixture("log-levels.mjs"), ...args] };
  home.writeConfig({ talk });
  await fleet.daemon(home);
  const client = await fleet.agent(home, "bridge");
  const router = new ResourcesPromptsRouter({
    client,
    scope,
    log: () => undefined,
  });
  client.onNotification((serverId, notification, about) =>
    router.deliverUpdated(serverId, notification as never, about),
  );
  return { router, call: (name) => client.call(`talk__${name}`, {}) };
}

/** A host session as the router sees it, and the URIs of the updates it was sent. */
function session(): Subscriber & { updated: string[] } {
  const updated: string[] = [];
  return {
    updated,
    subscriptions: new Map(),
    server: { sendResourceUpdated: async ({ uri }) => void updated.push(uri) },
  };
}

/** Lets promise callbacks run, no I/O: nothing a server answers can arrive meanwhile. */
async function microtasks(until: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !until(); turn++) await Promise.resolve();
  expect(until()).toBe(true);
}

describe("the bridge's subscriptions of one URI by two sessions", () => {
  for (const when of ["at once", "once A's subscribe is on its way"] as const) {
    it(`keeps B subscribed when A subscribes, A unsubscribes and B subscribes before the first answer (${when})`, async () => {
      const { router, call } = await routed();
      const a = session();
      const b = session();
      const first = router.subscribe(a, "note://1");
      if (when !== "at once") await microtasks(() => a.subscriptions.has("note://1"));
      // None of them is awaited until all three are asked.
      await Promise.all([
        first,
        router.unsubscribe(a, "note://1"),
        router.subscribe(b, "note://1"),
      ]);
      expect(await call("touch")).toBe("touched 1");
      await waitFor(() => b.updated.length === 1, BOUND_MS, "B to hear the update");
      expect(b.updated).toEqual(["note://1"]);
      expect(a.updated).toEqual([]);
      await router.unsubscribe(b, "note://1");
      expect(await call("touch")).toBe("touched 0");
    });
  }

  it("holds nothing for a session that closed while its subscribe waited its turn", async () => {
    const gate = join(fleet.home().dir, "subscribe-gate");
    const { router, call } = await routed([`--subscribe-gate=${gate}`]);
    const a = session();
    const b = session();
    // A's subscribe is held by the server; B's waits behind it, and B closes meanwhile.
    const first = router.subscribe(a, "note://1");
    const queued = router.subscribe(b, "note://1");
    await waitFor(
      () => existsSync(`${gate}.waiting`),
      BOUND_MS,
      "the server to hold A's subscribe",
    );
    await router.closeSession(b);
    writeFileSync(gate, "");
    await Promise.all([first, queued]);
    await router.unsubscribe(a, "note://1");
    expect(await call("subscribes")).toBe("subscribes 1 unsubscribes 1");
    expect(await call("touch")).toBe("touched 0");
    expect(b.updated).toEqual([]);
  });

  it("holds nothing for a session that closed while its subscribe looked for the URI's server", async () => {
    const gate = join(fleet.home().dir, "list-gate");
    // A scope of named servers: the router lists their resources to find the URI's server.
    const { router, call } = await routed([`--list-gate=${gate}`], scopeOf({ servers: ["talk"] }));
    // The server started first: a scope's server that never ran is not asked for resources.
    expect(await call("subscribes")).toBe("subscribes 0 unsubscribes 0");
    const b = session();
    const subscribing = router.subscribe(b, "note://1");
    await waitFor(() => existsSync(`${gate}.waiting`), BOUND_MS, "the server to hold the listing");
    await router.closeSession(b);
    writeFileSync(gate, "");
    await subscribing;
    expect(await call("subscribes")).toBe("subscribes 0 unsubscribes 0");
    expect(b.subscriptions.size).toBe(0);
  });
});
