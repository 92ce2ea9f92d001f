/**
 * MCP's own shapes that cross the socket unchanged: what a pooled server
 * asks in an elicitation, a call's progress, and the results of the passthrough requests.
 * Structural copies of the MCP schema (2025-11-25), loose where MCP is (`[key: string]:
 * unknown` keeps `_meta` and fields a newer server adds), because this package may not
 * import the SDK. The daemon hands the SDK's values to the wire typed as these, so an
 * optional field admits `undefined` as the SDK's (zod-inferred) types do; JSON never
 * carries it, so on the wire it is simply absent.
 */

/** A token naming one request's progress; chosen by whoever asked for progress. */
export type ProgressToken = string | number;

/** One progress notification of a call, without its token. */
export interface Progress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}

/** One field of an elicitation form: a primitive, or a (multi-)choice of strings. */
export type ElicitFieldSchema = Record<string, unknown> & {
  type: "string" | "number" | "integer" | "boolean" | "array";
};

/**
 * What a pooled server asks in `elicitation/create`: a form (`requestedSchema`, the default
 * mode) or a link the user should open (`mode: "url"`, declared only when the daemon's
 * pool is configured for it).
 */
export type ElicitRequestParams =
  | {
      mode?: "form" | undefined;
      message: string;
      requestedSchema: {
        type: "object";
        properties: Record<string, ElicitFieldSchema>;
        required?: string[] | undefined;
        [key: string]: unknown;
      };
      [key: string]: unknown;
    }
  | {
      mode: "url";
      message: string;
      url: string;
      elicitationId: string;
      [key: string]: unknown;
    };

/** The answer to an elicitation: `accept` with the form's `content`, or `decline` / `cancel`. */
export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean | string[]> | undefined;
  [key: string]: unknown;
}

/** One message of a sampling conversation: its `content` is text, an image, audio, or more. */
export interface SamplingMessage {
  role: "user" | "assistant";
  content: Record<string, unknown> | Record<string, unknown>[];
  [key: string]: unknown;
}

/** What a pooled server asks in `sampling/createMessage`: a completion of `messages`. */
export interface CreateMessageRequestParams {
  messages: SamplingMessage[];
  maxTokens: number;
  systemPrompt?: string | undefined;
  modelPreferences?: Record<string, unknown> | undefined;
  includeContext?: "none" | "thisServer" | "allServers" | undefined;
  temperature?: number | undefined;
  stopSequences?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
  [key: string]: unknown;
}

/** The answer to a sampling request: the model's message, and which model wrote it. */
export interface CreateMessageResult {
  role: "user" | "assistant";
  content: Record<string, unknown> | Record<string, unknown>[];
  model: string;
  stopReason?: string | undefined;
  [key: string]: unknown;
}

export type LoggingLevel =
  "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

export interface Resource {
  uri: string;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
  size?: number | undefined;
  [key: string]: unknown;
}

export interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
  [key: string]: unknown;
}

/** One resource's contents: `text`, or base64 `blob`. */
export interface ResourceContents {
  uri: string;
  mimeType?: string | undefined;
  text?: string | undefined;
  blob?: string | undefined;
  [key: string]: unknown;
}

export interface ListResourcesResult {
  resources: Resource[];
  nextCursor?: string | undefined;
  [key: string]: unknown;
}

export interface ListResourceTemplatesResult {
  resourceTemplates: ResourceTemplate[];
  nextCursor?: string | undefined;
  [key: string]: unknown;
}

export interface ReadResourceResult {
  contents: ResourceContents[];
  [key: string]: unknown;
}

export interface PromptArgument {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  required?: boolean | undefined;
  [key: string]: unknown;
}

export interface Prompt {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  arguments?: PromptArgument[] | undefined;
  [key: string]: unknown;
}

export interface ListPromptsResult {
  prompts: Prompt[];
  nextCursor?: string | undefined;
  [key: string]: unknown;
}

export interface PromptMessage {
  role: "user" | "assistant";
  /** A content block: text, image, audio, resource_link or embedded resource. */
  content: { type: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface GetPromptResult {
  description?: string | undefined;
  messages: PromptMessage[];
  [key: string]: unknown;
}

/** What completion/complete completes: a prompt's argument, or a resource template's. */
export type CompletionReference =
  | { type: "ref/prompt"; name: string; [key: string]: unknown }
  | { type: "ref/resource"; uri: string; [key: string]: unknown };

export interface CompleteResult {
  completion: {
    values: string[];
    total?: number | undefined;
    hasMore?: boolean | undefined;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}
