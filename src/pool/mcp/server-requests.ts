/**
 * The checks the SDK Client makes on a server's elicitation/create and sampling/createMessage
 * (1.32, client/index.js setRequestHandler), for the pool's own client: the request is
 * validated, an elicitation's mode (`form` when absent) must be one the pool declared, the
 * answer is validated, and an accepted form's missing fields take their schema's defaults
 * (SEP-1034: a client fills them; the SDK does so only when told, the pool always does).
 * What goes on to the host is the request as the server sent it: the schemas' parse drops
 * what they do not name (a form's `requestedSchema.$schema`) and fills in what the server
 * left out (`mode`), and a host direct would see neither.
 *
 * Loaded with the first such request (`await import()`): it reads the SDK's zod schemas,
 * which a daemon that is never asked anything does not load.
 */
import {
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  type CreateMessageRequest,
  type ElicitRequest,
} from "@modelcontextprotocol/sdk/types.js";

import { ErrorCode, McpError } from "../core/mcp-error.js";

type ElicitationCapability = { form?: object | undefined; url?: object | undefined } | undefined;

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Checks an elicitation request and its answer around `answer`. */
export async function checkedElicitation(
  request: unknown,
  declared: ElicitationCapability,
  answer: (params: ElicitRequest["params"]) => unknown,
): Promise<unknown> {
  const valid = ElicitRequestSchema.safeParse(request);
  if (!valid.success) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid elicitation request: ${reason(valid.error)}`,
    );
  }
  const params = (request as ElicitRequest).params;
  const mode = params.mode ?? "form";
  const form =
    declared !== undefined && (declared.form !== undefined || declared.url === undefined);
  const url = declared?.url !== undefined;
  if (mode === "form" && !form) {
    throw new McpError(
      ErrorCode.InvalidParams,
      "Client does not support form-mode elicitation requests",
    );
  }
  if (mode === "url" && !url) {
    throw new McpError(
      ErrorCode.InvalidParams,
      "Client does not support URL-mode elicitation requests",
    );
  }
  const result = ElicitResultSchema.safeParse(await answer(params));
  if (!result.success) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid elicitation result: ${reason(result.error)}`,
    );
  }
  const answered = result.data;
  if (params.mode !== "url" && answered.action === "accept") {
    const content = answered.content ?? {};
    try {
      applyDefaults(params.requestedSchema, content);
    } catch {
      // As the SDK: a default that cannot be applied leaves the answer as it was.
    }
    if (Object.keys(content).length > 0) answered.content = content;
  }
  return answered;
}

/** Checks a sampling request and its answer around `answer`. */
export async function checkedSampling(
  request: unknown,
  answer: (params: CreateMessageRequest["params"]) => unknown,
): Promise<unknown> {
  const valid = CreateMessageRequestSchema.safeParse(request);
  if (!valid.success) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid sampling request: ${reason(valid.error)}`);
  }
  const params = (request as CreateMessageRequest).params;
  const schema =
    params.tools || params.toolChoice
      ? CreateMessageResultWithToolsSchema
      : CreateMessageResultSchema;
  const result = schema.safeParse(await answer(params));
  if (!result.success) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid sampling result: ${reason(result.error)}`);
  }
  return result.data;
}

/** The SDK's applyElicitationDefaults: a missing field takes its schema's default, nested too. */
function applyDefaults(schema: unknown, data: unknown): void {
  if (!schema || typeof schema !== "object" || data === null || typeof data !== "object") return;
  const s = schema as {
    type?: unknown;
    properties?: Record<string, unknown>;
    anyOf?: unknown[];
    oneOf?: unknown[];
  };
  if (s.type === "object" && s.properties && typeof s.properties === "object") {
    const record = data as Record<string, unknown>;
    for (const [key, property] of Object.entries(s.properties)) {
      if (
        record[key] === undefined &&
        property !== null &&
        typeof property === "object" &&
        Object.prototype.hasOwnProperty.call(property, "default")
      ) {
        record[key] = (property as { default: unknown }).default;
      }
      if (record[key] !== undefined) applyDefaults(property, record[key]);
    }
  }
  for (const sub of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) {
    if (typeof sub !== "boolean") applyDefaults(sub, data);
  }
}
