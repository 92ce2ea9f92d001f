/**
 * The real hosts' sessions of the differential suite: what Claude Code, Gemini CLI and Codex
 * show their model or their user of the three pooled servers, read the same way direct and
 * through `mcpool wire`. Claude Code and Gemini CLI run headless (`-p`) against a loopback
 * stand-in for their model API (test/fixtures/real-hosts/), which asks for one call per server
 * and records every request: a view is the MCP tools of the first request that offers them,
 * the servers' instructions the host put in that request, and the tool results of the last.
 * Codex's view comes from its app-server: each server's status (info, capabilities, tools,
 * resources), `mcpServer/tool/call` of the same calls, each server's first resource read, and
 * a turn against a stand-in for the Responses API: the MCP tools and call outputs it is given.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import type { HostName } from "../../src/cli/hosts/configs.js";
import { HOST_MS, REAL_HOSTS_CLI, runHost } from "../helpers/real-hosts-cli.js";
import { binIn, killGroup, type RealWorld } from "../helpers/real-hosts.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";
import { normaliseValue } from "./normalise.js";

/**
 * The calls, the same for every host: one per pooled server, and server-everything's that
 * answer with more than text — structured content, annotations, an image, resource links —
 * and the roots it was given (the host's own, direct).
 */
export const CALLS = [
  { server: "filesystem", tool: "list_allowed_directories", input: {} },
  { server: "memory", tool: "read_graph", input: {} },
  { server: "everything", tool: "echo", input: { message: "hello from the stand-in" } },
  { server: "everything", tool: "get-structured-content", input: { location: "Chicago" } },
  {
    server: "everything",
    tool: "get-annotated-message",
    input: { messageType: "success", includeImage: true },
  },
  { server: "everything", tool: "get-resource-links", input: { count: 2 } },
  { server: "everything", tool: "get-roots-list", input: {} },
] as const;

/** How each headless host names a server's tool to its model. */
export const MODEL_TOOL_NAME = {
  claude: (server: string, tool: string): string => `mcp__${server}__${tool}`,
  gemini: (server: string, tool: string): string => `mcp_${server}_${tool}`,
  // Codex: a namespace per server, its functions' names with `_` for `-`.
  codex: (server: string, tool: string): string => `mcp__${server}__${tool.replaceAll("-", "_")}`,
};

/** One request a stand-in heard: the run it belongs to (its base URL's label) and its body. */
interface Heard {
  label: string;
  path: string;
  body: Record<string, unknown>;
}

/** A model-API stand-in: its URL, and the requests it heard for one label. */
export interface StandIn {
  url(label: string): string;
  heard(label: string): Heard[];
  stop(): Promise<void>;
}

/** Starts `test/fixtures/real-hosts/<name>`, asking for CALLS named as `named` names them. */
export async function standIn(
  name: string,
  record: string,
  named: (server: string, tool: string) => string,
): Promise<StandIn> {
  const calls = CALLS.map((c) => ({ name: named(c.server, c.tool), input: c.input }));
  writeFileSync(record, "");
  const child: ChildProcess = spawn(process.execPath, [fixture(`real-hosts/${name}`)], {
    env: { ...process.env, FAKE_CALLS: JSON.stringify(calls), FAKE_RECORD: record },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  await waitFor(() => /listening \S+/.test(out), 15_000, `the stand-in ${name} to listen`);
  const base = /listening (\S+)/.exec(out)![1] as string;
  return {
    url: (label) => `${base}/${label}`,
    heard: (label) =>
      readFileSync(record, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Heard)
        .filter((h) => h.label === label),
    async stop() {
      const pid = child.pid;
      child.kill("SIGTERM");
      if (pid !== undefined) await waitFor(() => !alive(pid), 10_000, `${name} to exit`);
    },
  };
}

/** What a host shows of the pooled servers, normalised (times and ids), ready to compare. */
export type View = Record<string, unknown>;

/** A real host of this suite: `mcpool wire`'s name, and its view in one labelled run. */
export interface ViewedHost {
  wire: HostName;
  /** The host's own file, which `mcpool wire --write` rewrites. */
  file(world: RealWorld): string;
  /** Writes the host's own file with the three servers direct (and what else it needs). */
  configure(world: RealWorld): void;
  view(prefix: string, world: RealWorld, label: string): Promise<View>;
}

/** Every string inside `value`, depth first. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(strings);
  return [];
}

/** The first string of `request` holding `marker`, from the marker on ("" when none does). */
function from(request: unknown, marker: string): string {
  const text = strings(request).find((s) => s.includes(marker));
  return text === undefined ? "" : text.slice(text.indexOf(marker));
}

/**
 * `items` keyed by name: a tool or server one side lacks is named as such, and the rest still
 * line up (a list would shift every index after it).
 */
const byName = (items: readonly { name: string }[]): Record<string, unknown> =>
  Object.fromEntries(items.map(({ name, ...rest }) => [name, rest]));

/** Fails with the host's output when the stand-in heard no request offering MCP tools. */
function firstOffering(heard: Heard[], offers: (h: Heard) => boolean, output: string): Heard {
  const first = heard.find(offers);
  if (first === undefined) {
    throw new Error(`no model request offered an MCP tool (${heard.length} heard):\n${output}`);
  }
  return first;
}

const host = (wire: HostName) => REAL_HOSTS_CLI.find((h) => h.wire === wire)!;

/** The prompt each headless host gets: the stand-in decides what is called, not the words. */
const PROMPT = "call each server's tool once";

/**
 * `view` normalised, with the files Claude Code saves a result's image or blob to named alike:
 * it names each by the time and a random part (`mcp-<server>-blob-<ms>-<random>.png`).
 */
const savedBlobsNamed = (view: Record<string, unknown>): View =>
  JSON.parse(
    JSON.stringify(normaliseValue(view)).replace(/mcp-[\w-]+?-blob-\d+-\w+\./g, "<saved blob>."),
  ) as View;

/** Claude Code's tool as the Messages API carries it. */
interface AnthropicTool {
  name: string;
  description?: string;
  input_schema?: unknown;
}

export function claudeCode(anthropic: StandIn): ViewedHost {
  const named = MODEL_TOOL_NAME.claude;
  return {
    wire: "claude-code",
    file: (world) => host("claude-code").file(world),
    configure: (world) => host("claude-code").configure(world),
    async view(prefix, world, label) {
      const output = await runHost(
        binIn(prefix, "claude"),
        [
          "-p",
          PROMPT,
          "--allowedTools",
          CALLS.map((c) => named(c.server, c.tool)).join(","),
          "--output-format",
          "json",
        ],
        world,
        undefined,
        {
          ANTHROPIC_BASE_URL: anthropic.url(label),
          ANTHROPIC_API_KEY: "sk-stand-in",
          // Every MCP tool offered in the first turn, not behind a tool search.
          ENABLE_TOOL_SEARCH: "false",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          // The first turn waits for the MCP servers (by default `-p` may go without them).
          MCP_CONNECTION_NONBLOCKING: "false",
          // A server's start may be slow on a loaded machine: a minute for it, on both sides.
          // `-p` otherwise sends its first turn after 5 s with only the servers connected by
          // then; through entries that start the daemon, servers and all, on a loaded machine
          // connecting took 5.3–6.4 s (direct 1–2 s): a difference in time, not in what the
          // host is given, and no clock may decide what this suite compares.
          MCP_TIMEOUT: "60000",
          CLAUDE_CODE_MCP_STARTUP_WAIT_MS: "60000",
        },
      );
      const heard = anthropic.heard(label).filter((h) => h.path.includes("/v1/messages"));
      const tools = (h: Heard): AnthropicTool[] =>
        ((h.body.tools ?? []) as AnthropicTool[]).filter((t) => t.name.startsWith("mcp__"));
      const first = firstOffering(heard, (h) => tools(h).length > 0, output);
      const last = heard.at(-1)!;
      const parts = ((last.body.messages ?? []) as { content?: unknown }[]).flatMap((m) =>
        Array.isArray(m.content) ? (m.content as Record<string, unknown>[]) : [],
      );
      const called = new Map(parts.filter((p) => p.type === "tool_use").map((p) => [p.id, p.name]));
      return savedBlobsNamed({
        tools: byName(
          tools(first).map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: t.input_schema,
          })),
        ),
        instructions: from(first.body, "# MCP Server Instructions"),
        results: parts
          .filter((p) => p.type === "tool_result")
          .map((p) => ({
            tool: called.get(p.tool_use_id),
            content: p.content,
            is_error: p.is_error,
          })),
      });
    },
  };
}

/** A Gemini API function declaration. */
interface Declaration {
  name: string;
}

export function geminiCli(gemini: StandIn): ViewedHost {
  return {
    wire: "gemini",
    file: (world) => host("gemini").file(world),
    configure(world) {
      const own = host("gemini");
      own.configure(world);
      // Headless Gemini CLI signs in by API key only when the user chose that way.
      const file = own.file(world);
      const settings = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      settings.security = { auth: { selectedType: "gemini-api-key" } };
      writeFileSync(file, JSON.stringify(settings, null, 2));
    },
    async view(prefix, world, label) {
      // `--yolo`: a headless run offers the model only tools that need no approval.
      const output = await runHost(
        binIn(prefix, "gemini"),
        ["-p", PROMPT, "--yolo", "--output-format", "json"],
        world,
        undefined,
        { GEMINI_API_KEY: "stand-in", GOOGLE_GEMINI_BASE_URL: gemini.url(label) },
      );
      const turns = gemini.heard(label).filter((h) => h.path.includes(":streamGenerateContent"));
      const declared = (h: Heard): Declaration[] =>
        ((h.body.tools ?? []) as { functionDeclarations?: Declaration[] }[])
          .flatMap((t) => t.functionDeclarations ?? [])
          .filter((d) => d.name.startsWith("mcp_"));
      const first = firstOffering(turns, (h) => declared(h).length > 0, output);
      const last = turns.at(-1)!;
      const responses = ((last.body.contents ?? []) as { parts?: Record<string, unknown>[] }[])
        .flatMap((c) => c.parts ?? [])
        .flatMap((p) => (p.functionResponse === undefined ? [] : [p.functionResponse]))
        .map((r) => {
          const { id: _id, ...rest } = r as Record<string, unknown>;
          return rest;
        });
      return normaliseValue({
        tools: byName(declared(first)),
        instructions: from(first.body.contents, "instructions provided by the tool server"),
        results: responses,
      }) as View;
    },
  };
}

/** Codex app-server's JSON-RPC over stdio, one request at a time. */
type Ask = (method: string, params: Record<string, unknown>) => Promise<unknown>;

/** Runs `body` against a `codex app-server` in the project; the app-server ends with stdin. */
async function codexAppServer<T>(
  prefix: string,
  world: RealWorld,
  args: string[],
  body: (ask: Ask, noted: (method: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  const child = spawn(binIn(prefix, "codex"), ["app-server", ...args], {
    cwd: world.project,
    env: world.login,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let buffered = "";
  let log = "";
  const waiting = new Map<number, (reply: Record<string, unknown>) => void>();
  /** The notifications' methods heard so far. */
  const methods = new Set<string>();
  child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines) {
      const message = JSON.parse(line) as Record<string, unknown>;
      if (typeof message.method === "string" && !("id" in message)) methods.add(message.method);
      if (typeof message.id !== "number" || "method" in message) continue;
      waiting.get(message.id)?.(message);
    }
  });
  let next = 0;
  const ask: Ask = (method, params) => {
    const id = ++next;
    child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`codex app-server did not answer ${method} in time:\n${log}`));
      }, HOST_MS);
      waiting.set(id, (reply) => {
        clearTimeout(timer);
        if ("error" in reply) reject(new Error(`${method} failed: ${JSON.stringify(reply)}`));
        else resolve(reply.result);
      });
    });
  };
  try {
    await ask("initialize", { clientInfo: { name: "mcpool-differential", version: "0" } });
    child.stdin.write(`${JSON.stringify({ method: "initialized" })}\n`);
    const noted = (method: string): Promise<void> =>
      waitFor(() => methods.has(method), HOST_MS, `codex app-server's ${method}`);
    return await body(ask, noted);
  } finally {
    child.stdin.end();
    const pid = child.pid;
    if (pid !== undefined) {
      await waitFor(() => !alive(pid), 15_000, "codex app-server to end").catch(() => undefined);
    }
    killGroup(child);
  }
}

/** Codex's model provider, the stand-in: `-c` settings of the app-server's command line. */
const providerArgs = (baseUrl: string): string[] =>
  [
    'model="gpt-5"',
    'model_provider="standin"',
    'model_providers.standin.name="stand-in"',
    `model_providers.standin.base_url="${baseUrl}/v1"`,
    'model_providers.standin.wire_api="responses"',
  ].flatMap((setting) => ["-c", setting]);

/** A function the Responses API carries, alone or in a namespace (Codex's `mcp__<server>`). */
interface ResponsesTool {
  type: string;
  name: string;
  tools?: ResponsesTool[];
}

/** The MCP tools of a Codex turn, and the outputs of its calls, as the model is given them. */
function codexModelView(heard: Heard[]): Record<string, unknown> {
  const namespaces = (h: Heard): ResponsesTool[] =>
    ((h.body.tools ?? []) as ResponsesTool[]).filter(
      (t) => t.type === "namespace" && t.name.startsWith("mcp__"),
    );
  const first = heard.find((h) => namespaces(h).length > 0);
  const input = (heard.at(-1)?.body.input ?? []) as Record<string, unknown>[];
  return {
    tools: byName(
      (first === undefined ? [] : namespaces(first)).map((ns) => ({
        ...ns,
        tools: byName(ns.tools ?? []),
      })),
    ),
    // Codex prefixes each output with the call's wall time.
    outputs: JSON.parse(
      JSON.stringify(
        input.filter((i) => i.type === "function_call_output").map((i) => i.output),
      ).replace(/Wall time: [\d.]+ seconds/g, "Wall time: <time>"),
    ) as unknown,
  };
}

export function codexAppServerHost(openai: StandIn): ViewedHost {
  return {
    wire: "codex",
    file: (world) => host("codex").file(world),
    configure: (world) => host("codex").configure(world),
    async view(prefix, world, label) {
      const args = providerArgs(openai.url(label));
      return codexAppServer(prefix, world, args, async (ask, noted) => {
        const thread = { cwd: world.project, approvalPolicy: "never" };
        const started = (await ask("thread/start", thread)) as {
          thread: { id: string };
        };
        const threadId = started.thread.id;
        // The thread's own connections: the list waits until each server has started.
        const list = async () =>
          (await ask("mcpServerStatus/list", { threadId })) as {
            data: { name: string; tools?: Record<string, unknown> }[];
          };
        const offered = await list();
        const listed = (server: string, tool: string): boolean =>
          offered.data.some((s) => s.name === server && s.tools?.[tool] !== undefined);
        // As a model would: only the tools the session lists (Codex declares no roots, so
        // server-everything offers it no get-roots-list).
        const results = [];
        for (const call of CALLS.filter((c) => listed(c.server, c.tool))) {
          const params = { threadId, server: call.server, tool: call.tool, arguments: call.input };
          results.push({
            call: `${call.server} ${call.tool}`,
            result: await ask("mcpServer/tool/call", params).catch((error: Error) => ({
              error: error.message,
            })),
          });
        }
        // Each server's first resource read, as Codex reads one for its model.
        const reads = [];
        for (const server of offered.data) {
          const uri = (server as { resources?: { uri: string }[] }).resources?.[0]?.uri;
          if (uri === undefined) continue;
          const params = { threadId, server: server.name, uri };
          reads.push({
            read: `${server.name} ${uri}`,
            result: await ask("mcpServer/resource/read", params).catch((error: Error) => ({
              error: error.message,
            })),
          });
        }
        // A turn: the stand-in has the model call each server's tool.
        await ask("turn/start", { threadId, input: [{ type: "text", text: PROMPT }] });
        await noted("turn/completed");
        const model = codexModelView(openai.heard(label));
        // The status once the calls are made: each connection's state is then settled.
        const status = await list();
        return normaliseValue({ status: byName(status.data), results, reads, model }) as View;
      });
    },
  };
}
