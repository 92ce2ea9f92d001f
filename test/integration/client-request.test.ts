/**
 * PoolClient.request(): any method of the protocol's METHODS, by the descriptor's name, over
 * a real daemon. It is what makes a new wire method one descriptor and one handler: an agent
 * reaches it before anyone writes a wrapper, and the wrappers are sugar over it.
 */
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { useFleet } from "../helpers/fleet.js";
import { fixture } from "../helpers/processes.js";

const fleet = useFleet();

async function agentOnEcho(): Promise<PoolClient> {
  const home = fleet.home("mcpool-request-");
  home.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
  await fleet.daemon(home);
  const agent = await fleet.agent(home, "request-agent");
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
