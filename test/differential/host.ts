/**
 * A host for the differential suite: SDK v1's Client (a 2025-11-25 host) or SDK v2's Client
 * negotiating its era (`auto`: 2026-07-28 where the server speaks it, as Claude Code does),
 * declaring one of three capability sets and answering the server's questions the same way
 * every run. The questions it was asked are kept, in order, for the transcript.
 */
import { pathToFileURL } from "node:url";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ResultSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { argumentsFor } from "./arguments.js";

export const CLIENTS = ["v1", "v2"] as const;
export type ClientKind = (typeof CLIENTS)[number];
/** none; `asks`: sampling and elicitation (form and url); `roots`: roots with listChanged. */
export const CAPABILITY_SETS = ["none", "asks", "roots"] as const;
export type CapabilitySet = (typeof CAPABILITY_SETS)[number];

export interface HostSpec {
  client: ClientKind;
  capabilities: CapabilitySet;
  /** The project a host with roots declares (its only root). */
  root: string;
}

/** Where a host connects: a command it spawns, or an HTTP endpoint. */
export type Target =
  | { kind: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { kind: "http"; url: string; token: string | undefined };

const CAPABILITIES: Record<CapabilitySet, Record<string, unknown>> = {
  none: {},
  asks: { sampling: {}, elicitation: { form: {}, url: {} } },
  roots: { roots: { listChanged: true } },
};

/** What a host answers a sampling request: the same text whatever was asked. */
export const SAMPLE = {
  role: "assistant",
  content: { type: "text", text: "a sampled answer" },
  model: "differential-model",
  stopReason: "endTurn",
};

/** What a host answers an elicitation: a url is declined, a form accepted with made-up values. */
export function elicitAnswer(params: Record<string, unknown>): Record<string, unknown> {
  if (params.mode === "url") return { action: "decline" };
  return { action: "accept", content: argumentsFor(params.requestedSchema) };
}

export interface Asked {
  method: string;
  params: unknown;
}

/** The operations a session runs, the same on both SDKs. */
export interface Host {
  era: string;
  serverInfo: unknown;
  serverCapabilities: unknown;
  instructions: string | undefined;
  /** The server's questions, in the order they came. */
  asked: Asked[];
  /** The URIs of the `notifications/resources/updated` the host was sent, in order. */
  updated: string[];
  /**
   * An SDK v1 host's log lines (`<level> <data>`) and list changes (their methods) it was
   * sent unasked, in order.
   */
  notices?: string[];
  request(method: string, params: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

const REQUEST_TIMEOUT_MS = 30_000;

/** Connects a host of `spec` to `target`. */
export async function connectHost(spec: HostSpec, target: Target): Promise<Host> {
  const asked: Asked[] = [];
  const roots = { roots: [{ uri: pathToFileURL(spec.root).href, name: "project" }] };
  const answer = (method: string, params: unknown): Record<string, unknown> => {
    asked.push({ method, params });
    if (method === "sampling/createMessage") return SAMPLE;
    if (method === "roots/list") return roots;
    return elicitAnswer((params ?? {}) as Record<string, unknown>);
  };
  const info = { name: "differential-host", version: "1.0.0" };
  const capabilities = CAPABILITIES[spec.capabilities];
  return spec.client === "v1"
    ? connectV1(info, capabilities, target, answer, asked)
    : connectV2(info, capabilities, target, answer, asked);
}

type Answer = (method: string, params: unknown) => Record<string, unknown>;

/** What a server may ask a host: the capability it needs, the method, SDK v1's schema for it. */
const ASKS = [
  ["sampling", "sampling/createMessage", CreateMessageRequestSchema],
  ["elicitation", "elicitation/create", ElicitRequestSchema],
  ["roots", "roots/list", ListRootsRequestSchema],
] as const;

async function connectV1(
  info: { name: string; version: string },
  capabilities: Record<string, unknown>,
  target: Target,
  answer: Answer,
  asked: Asked[],
): Promise<Host> {
  const client = new ClientV1(info, { capabilities });
  for (const [capability, , schema] of ASKS) {
    if (capability in capabilities) {
      client.setRequestHandler(schema, (r) => answer(r.method, r.params) as never);
    }
  }
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
  });
  const notices: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    notices.push(`${n.params.level} ${JSON.stringify(n.params.data)}`);
  });
  for (const schema of LIST_CHANGES) {
    client.setNotificationHandler(schema, (n) => void notices.push(n.method));
  }
  const transport =
    target.kind === "stdio"
      ? new StdioV1({ ...target, stderr: "ignore" })
      : new HttpV1(new URL(target.url), { requestInit: authorization(target.token) });
  await client.connect(transport);
  const host = hostOf(client, "legacy", { asked, updated }, (method, params) =>
    client.request({ method, params } as never, ResultSchema, { timeout: REQUEST_TIMEOUT_MS }),
  );
  return { ...host, notices };
}

/** The list changes an SDK v1 host records among its notices. */
const LIST_CHANGES = [
  ToolListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  PromptListChangedNotificationSchema,
] as const;

/** A connected SDK client (either major version) as a Host. */
function hostOf(
  client: {
    getServerVersion(): unknown;
    getServerCapabilities(): unknown;
    getInstructions(): string | undefined;
    close(): Promise<void>;
  },
  era: string,
  { asked, updated }: Pick<Host, "asked" | "updated">,
  request: Host["request"],
): Host {
  return {
    era,
    serverInfo: client.getServerVersion(),
    serverCapabilities: client.getServerCapabilities(),
    instructions: client.getInstructions(),
    asked,
    updated,
    request,
    close: () => client.close(),
  };
}

async function connectV2(
  info: { name: string; version: string },
  capabilities: Record<string, unknown>,
  target: Target,
  answer: Answer,
  asked: Asked[],
): Promise<Host> {
  const client = new ClientV2(info, { capabilities, versionNegotiation: { mode: "auto" } });
  for (const [capability, method] of ASKS) {
    if (capability in capabilities) {
      client.setRequestHandler(method, (r) => answer(r.method, r.params) as never);
    }
  }
  const updated: string[] = [];
  client.setNotificationHandler("notifications/resources/updated", (n) => {
    updated.push(n.params.uri);
  });
  const transport =
    target.kind === "stdio"
      ? new StdioV2({ ...target, stderr: "ignore" })
      : new HttpV2(new URL(target.url), { requestInit: authorization(target.token) });
  await client.connect(transport);
  const era = client.getProtocolEra() ?? "unknown";
  const methods: Record<string, (params: never) => Promise<unknown>> = {
    "tools/list": (p) => client.listTools(p),
    "tools/call": (p) => client.callTool(p),
    "prompts/list": (p) => client.listPrompts(p),
    "prompts/get": (p) => client.getPrompt(p),
    "resources/list": (p) => client.listResources(p),
    "resources/templates/list": (p) => client.listResourceTemplates(p),
    "resources/read": (p) => client.readResource(p),
    "resources/subscribe": (p) => client.subscribeResource(p),
    "resources/unsubscribe": (p) => client.unsubscribeResource(p),
    ...(era === "modern" ? listening(client) : {}),
    "completion/complete": (p) => client.complete(p),
    // A task-augmented call and the task requests: the result as the server sent it.
    "tools/call+task": (p) => client.request({ method: "tools/call", params: p }, AS_SENT),
    ...Object.fromEntries(
      TASK_REQUESTS.map((m) => [
        m,
        (p: never) => client.request({ method: m, params: p }, AS_SENT),
      ]),
    ),
  };
  return hostOf(client, era, { asked, updated }, (method, params) => {
    const tasked = method === "tools/call" && (params as { task?: unknown }).task !== undefined;
    const send = methods[tasked ? "tools/call+task" : method];
    if (send === undefined) throw new Error(`the session does not send ${method}`);
    return send(params as never);
  });
}

/**
 * A 2026-07-28 host's subscription to a resource: that era has no `resources/subscribe`, a
 * `subscriptions/listen` naming the URI replaces it (the updates come on its stream), and
 * letting the stream go ends it. Each answers `{}`, as `resources/(un)subscribe` does.
 */
function listening(client: ClientV2): Record<string, (params: never) => Promise<unknown>> {
  const open = new Map<string, { close(): Promise<void> }>();
  return {
    "resources/subscribe": async ({ uri }: { uri: string }) => {
      open.set(uri, await client.listen({ resourceSubscriptions: [uri] }));
      return {};
    },
    "resources/unsubscribe": async ({ uri }: { uri: string }) => {
      await open.get(uri)?.close();
      open.delete(uri);
      return {};
    },
  };
}

const TASK_REQUESTS = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"];

/** A result schema (Standard Schema) that takes the result as it came. */
const AS_SENT = {
  "~standard": {
    version: 1 as const,
    vendor: "differential",
    validate: (value: unknown) => ({ value }),
  },
};

function authorization(token: string | undefined): RequestInit {
  return token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } };
}
