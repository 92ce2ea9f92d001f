/**
 * PoolClient.request(): any method of the protocol's METHODS, by the descriptor's name, over
 * a real daemon. It is what makes a new wire method one descriptor and one handler: an agent
 * reaches it before anyone writes a wrapper, and the wrappers are sugar over it.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";

import {
  client,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture } from "../helpers/processes.js";

const homes: TestHome[] = [];
const daemons: RunningDaemon[] = [];
const clients: PoolClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(daemons.splice(0).map((d) => d.stop()));
  for (const h of homes.splice(0)) h.remove();
});

async function agentOnEcho(): Promise<PoolClient> {
  const home = testHome("mcpool-request-");
  homes.push(home);
  home.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
  daemons.push(await startDaemon(home));
  const agent = await client(home, "request-agent");
  clients.push(agent);
  return agent;
}

describe("PoolClient.request", () => {
  it("sends any wire method by its descriptor's name and answers what the wrapper answers", async () => {
    const agent = await agentOnEcho();
    const answer = await agent.request("tools/call", {
      name: "echo__echo",
      arguments: { text: "by descriptor" },
    });
    expect(answer).toEqual({ text: await agent.call("echo__echo", { text: "by descriptor" }) });
    const states = await agent.request("pool/state", {});
    expect(states.map((state) => state.id)).toEqual((await agent.state()).map((s) => s.id));
    const status = await agent.request("daemon/status", {});
    expect(status.version).toBe((await agent.status()).version);
  });

  it("refuses bad params with the daemon's check, and stops at an aborted signal", async () => {
    const agent = await agentOnEcho();
    const bad = { name: 42 } as unknown as { name: string };
    await expect(agent.request("tools/call", bad)).rejects.toMatchObject({ code: "rpc-error" });
    const aborted = AbortSignal.abort(new Error("stop"));
    await expect(agent.request("tools/list", {}, { signal: aborted })).rejects.toThrow("stop");
  });
});
