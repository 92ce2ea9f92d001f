/**
 * Tools on demand, against direct: a host given `mcpool bridge --catalog` (whole pool) first
 * lists only the pool's search, describe and call tools — in both eras — and through them gets
 * what it gets direct: `describe_tool` gives each tool as the server lists it (named
 * `<server>__<tool>`), and `call_tool` gives each call's result as the server answers it — to
 * a host served 2026-07-28, a tool that requires a task answers what its task answers direct
 * (the pool runs the task: its era has none).
 */
import { describe, expect, it } from "vitest";
import { bridgeCommand, stringEnv } from "../helpers/bridge.js";
import { testHome } from "../helpers/daemon.js";
import { openHost } from "./entries.js";
import { CLIENTS, connectHost, type ClientKind, type Host, type HostSpec } from "./host.js";
import { compare, differences, normalise, withTaskResults } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { matrixServers } from "./servers.js";
import { plannedCalls, step, type Named, type Step } from "./session.js";
import { requiredTaskResults } from "./tasks.js";

const CATALOG_TOOLS = ["call_tool", "describe_tool", "search_tools"];
/** Both eras' hosts. */
const HOSTS: readonly ClientKind[] = CLIENTS;

describe("bridge --catalog against direct", () => {
  const home = testHome("mcpool-differential-catalog-");
  const server = matrixServers(home.dir).find((s) => s.id === "everything")!;
  pooling(home, [server]);

  /**
   * The direct session's tools and its calls, as steps after one naming the era it spoke; and
   * what each tool that requires a task answers when run as one (what a 2026-07-28 host of
   * the catalogue is answered: normalise.ts TASK_RUN_FOR_MODERN).
   */
  async function direct(spec: HostSpec): Promise<[Named[], Step[], Map<string, unknown>]> {
    const host = await openHost(home, server, spec, "direct");
    try {
      const listed = (await host.request("tools/list", {})) as { tools: Named[] };
      const steps = [eraStep(host), ...(await calls(host, listed.tools, (call) => call))];
      const planned = plannedCalls(listed.tools, server.script).flatMap((call) =>
        "notCalled" in call ? [] : [call],
      );
      const tasked = await requiredTaskResults(host, planned, listed.tools);
      return [listed.tools, steps, tasked];
    } finally {
      await host.close();
    }
  }

  /**
   * The era `host` was served, as a handshake step: the catalogue serves a dual-era host
   * 2026-07-28 whatever the server speaks, so compare (normalise.ts) allows that era's envelope.
   */
  function eraStep(host: Host): Step {
    return { op: "handshake", result: { era: host.era } };
  }

  /** `tools` called on `host`, each request made by `wrap` from the direct one. */
  async function calls(
    host: Host,
    tools: Named[],
    wrap: (call: { name: string; arguments: Record<string, unknown> }) => Record<string, unknown>,
  ): Promise<Step[]> {
    const out: Step[] = [];
    for (const call of plannedCalls(tools, server.script)) {
      if ("notCalled" in call) continue;
      const made = await step(host, "tools/call", wrap(call));
      out.push({ ...made, params: call });
    }
    return out;
  }

  it.each(HOSTS)(
    "gives an SDK %s host the catalogue, and each tool and call as direct",
    async (client: ClientKind) => {
      const spec: HostSpec = { client, capabilities: "none", root: projectOf(home, client) };
      const [tools, directCalls, tasked] = await direct(spec);
      const host = await connectHost(spec, {
        kind: "stdio",
        ...bridgeCommand(home, ["--catalog", "--socket", home.socketPath], "lean"),
        env: stringEnv(home.env),
      });
      try {
        const first = (await host.request("tools/list", {})) as { tools: Named[] };
        expect(first.tools.map((t) => t.name).sort()).toEqual(CATALOG_TOOLS);
        const described: string[] = [];
        for (const tool of tools) {
          const name = `${server.id}__${tool.name}`;
          const about = (await host.request("tools/call", {
            name: "describe_tool",
            arguments: { name },
          })) as { structuredContent?: Record<string, unknown> };
          const want = normalise([{ op: "tool", result: { ...tool, name } }]);
          const got = normalise([{ op: "tool", result: about.structuredContent }]);
          described.push(...differences(want, got).map((d) => `${tool.name}: ${d}`));
        }
        expect(described.join("\n")).toBe("");
        const called = await calls(host, tools, (call) => ({
          name: "call_tool",
          arguments: { name: `${server.id}__${call.name}`, arguments: call.arguments },
        }));
        const pooled = normalise([eraStep(host), ...called]);
        // Served 2026-07-28, a host takes no task: the pool runs one for a tool that requires it.
        const oracle = host.era === "modern" ? withTaskResults(directCalls, tasked) : directCalls;
        expect(compare(normalise(oracle), pooled).join("\n")).toBe("");
      } finally {
        await host.close();
      }
    },
    120_000,
  );
});
