/**
 * The scripted session, one per host and way in: the handshake as the host has it; every
 * page of tools, prompts, resources and resource templates; every tool called with arguments
 * from its inputSchema (or the server's fixed set); every prompt got; the first resources
 * read; completion for each prompt argument and template variable; subscribe and unsubscribe;
 * a server's tasks when it offers them (tasks.ts); and the questions the server asked on the
 * way. Steps run one after another, so a transcript
 * depends on the server alone, and an error is a step's outcome, never the session's end.
 */
import { argumentsFor, valueFor } from "./arguments.js";
import type { Host } from "./host.js";
import { offersToolTasks, taskSteps, taskTool } from "./tasks.js";

/** How many resources a session reads (server-everything lists a hundred). */
export const RESOURCES_READ = 5;
/** A bound on pages, so a server that pages for ever ends the session with a clear error. */
const MAX_PAGES = 50;

export interface Step {
  op: string;
  params?: unknown;
  result?: unknown;
  error?: { code?: unknown; message: string };
  /** The server's questions while this step ran. */
  asked?: unknown[];
}

/** What a server needs that a schema cannot say, per tool: its arguments, or `skip` and why. */
export interface ServerScript {
  /** Arguments by tool name, used instead of generated ones. */
  fixed?: Record<string, Record<string, unknown>>;
  /** Tools called in this order first (a stateful server's script), the rest after. */
  order?: string[];
  /** Tools called twice in a row (a toggle, left as it was found). */
  twice?: string[];
  /**
   * A call whose answer names the host's root once the server has taken the host's roots in
   * (a server asks for them after the handshake and applies them when it will). A direct
   * session waits for it, bounded, before its first step: the oracle is the server that has
   * the host's roots, which is what the pool promises a host declaring roots.
   */
  rootsTaken?: { name: string; arguments: Record<string, unknown> };
  /** Tools not called, each with why (listed in the transcript, so never silently). */
  uncalled?: Record<string, string>;
}

export interface Named {
  name: string;
  inputSchema?: unknown;
  arguments?: { name: string }[];
  uri?: string;
  uriTemplate?: string;
}

/** One request as a step: its answer or its error, and the server's questions meanwhile. */
export async function step(host: Host, op: string, params: Record<string, unknown>): Promise<Step> {
  const before = host.asked.length;
  const out: Step = { op, params };
  try {
    out.result = await host.request(op, params);
  } catch (error) {
    const e = error as { code?: unknown; message?: string };
    out.error = { code: e.code, message: String(e.message ?? error) };
  }
  if (host.asked.length > before) out.asked = host.asked.slice(before);
  return out;
}

/** Every page of `op`'s list, as steps, and the items (under `key`) they held. */
async function pages(host: Host, op: string, key: string): Promise<[Step[], Named[]]> {
  const steps: Step[] = [];
  const items: Named[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const s = await step(host, op, cursor === undefined ? {} : { cursor });
    steps.push(s);
    const result = s.result as Record<string, unknown> | undefined;
    items.push(...((result?.[key] as Named[] | undefined) ?? []));
    cursor = result?.nextCursor as string | undefined;
    if (cursor === undefined) return [steps, items];
  }
  steps.push({ op, error: { message: `more than ${MAX_PAGES} pages` } });
  return [steps, items];
}

function ordered(tools: Named[], script: ServerScript): Named[] {
  const first = script.order ?? [];
  const rank = (t: Named): number =>
    first.includes(t.name) ? first.indexOf(t.name) : first.length;
  return [...tools].sort((a, b) => rank(a) - rank(b));
}

export type PlannedCall =
  { name: string; arguments: Record<string, unknown> } | { name: string; notCalled: string };

/** The calls a session makes of `tools`, in order: the script's, else generated arguments. */
export function plannedCalls(tools: readonly Named[], script: ServerScript): PlannedCall[] {
  return ordered([...tools], script).flatMap((tool): PlannedCall[] => {
    const why = script.uncalled?.[tool.name];
    if (why !== undefined) return [{ name: tool.name, notCalled: why }];
    const args = script.fixed?.[tool.name] ?? argumentsFor(tool.inputSchema);
    const call = { name: tool.name, arguments: args };
    return script.twice?.includes(tool.name) === true ? [call, call] : [call];
  });
}

/** The template's variables: `{id}`, `{+path}`, `{?q,r}` → id, path, q, r. */
function variables(template: string): string[] {
  return [...template.matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((m) => m[1]!.split(","));
}

/** Runs the session on `host`; its transcript. */
export async function runSession(host: Host, script: ServerScript = {}): Promise<Step[]> {
  const caps = (host.serverCapabilities ?? {}) as Record<string, Record<string, unknown>>;
  const steps: Step[] = [
    {
      op: "handshake",
      result: {
        era: host.era,
        serverInfo: host.serverInfo,
        capabilities: host.serverCapabilities,
        instructions: host.instructions,
      },
    },
  ];
  if (host.asked.length > 0) steps[0]!.asked = host.asked.slice();
  let tools: Named[] = [];
  if (caps.tools !== undefined) {
    const [listed, items] = await pages(host, "tools/list", "tools");
    steps.push(...listed);
    tools = items;
  }
  for (const call of plannedCalls(tools, script)) {
    if ("notCalled" in call) {
      steps.push({ op: "tools/call", params: { name: call.name }, result: call });
      continue;
    }
    steps.push(await step(host, "tools/call", call));
  }
  const tasked = offersToolTasks(caps) ? taskTool(tools) : undefined;
  if (tasked !== undefined) {
    const args = script.fixed?.[tasked.name] ?? argumentsFor(tasked.inputSchema);
    steps.push(...(await taskSteps(host, tasked, args)));
  }
  const completions: Record<string, unknown>[] = [];
  if (caps.prompts !== undefined) {
    const [listed, prompts] = await pages(host, "prompts/list", "prompts");
    steps.push(...listed);
    for (const prompt of prompts) {
      const names = (prompt.arguments ?? []).map((a) => a.name);
      const args = Object.fromEntries(names.map((n) => [n, String(valueFor(undefined, n))]));
      steps.push(await step(host, "prompts/get", { name: prompt.name, arguments: args }));
      for (const name of names) {
        completions.push({
          ref: { type: "ref/prompt", name: prompt.name },
          argument: { name, value: "" },
        });
      }
    }
  }
  if (caps.resources !== undefined) {
    const [listed, resources] = await pages(host, "resources/list", "resources");
    steps.push(...listed);
    for (const resource of resources.slice(0, RESOURCES_READ)) {
      steps.push(await step(host, "resources/read", { uri: resource.uri }));
    }
    const [templated, templates] = await pages(
      host,
      "resources/templates/list",
      "resourceTemplates",
    );
    steps.push(...templated);
    for (const template of templates) {
      const uri = template.uriTemplate as string;
      for (const name of variables(uri)) {
        completions.push({ ref: { type: "ref/resource", uri }, argument: { name, value: "" } });
      }
    }
    const first = resources[0]?.uri;
    if (caps.resources.subscribe === true && first !== undefined) {
      steps.push(await step(host, "resources/subscribe", { uri: first }));
      steps.push(await step(host, "resources/unsubscribe", { uri: first }));
    }
  }
  if (caps.completions !== undefined) {
    for (const params of completions) steps.push(await step(host, "completion/complete", params));
  }
  return steps;
}
