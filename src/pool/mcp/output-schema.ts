/**
 * A tool's output schema, checked against the structured content it answered (the SDK
 * Client's rule and messages). AJV (8 MB resident) loads with the first tool that has an
 * output schema and is called, not with the daemon; one instance serves every connection,
 * where each SDK Client built its own.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";

import { ErrorCode, McpError } from "../core/mcp-error.js";

/** Throws the SDK's InvalidParams error when `structured` does not fit the schema. */
export type OutputCheck = (structured: unknown) => void;

type Validator = (input: unknown) => { valid: boolean; errorMessage?: string | undefined };
interface Provider {
  getValidator(schema: unknown): Validator;
}

// Loaded once, on first need, and shared; holds compiled schemas only.
let provider: Promise<Provider> | undefined;

async function ajv(): Promise<Provider> {
  provider ??= import("@modelcontextprotocol/sdk/validation/ajv-provider.js").then(
    ({ AjvJsonSchemaValidator }) => new AjvJsonSchemaValidator() as Provider,
  );
  return provider;
}

export async function outputChecker(schema: Tool["outputSchema"]): Promise<OutputCheck> {
  let validator: Validator;
  try {
    validator = (await ajv()).getValidator(schema);
  } catch (error) {
    return () => {
      throw failed(error);
    };
  }
  return (structured) => {
    let outcome: ReturnType<Validator>;
    try {
      outcome = validator(structured);
    } catch (error) {
      throw failed(error);
    }
    if (!outcome.valid) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Structured content does not match the tool's output schema: ${outcome.errorMessage}`,
      );
    }
  };
}

function failed(error: unknown): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    `Failed to validate structured content: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/** The output schemas of one connection's tools, as its last listing gave them, each check compiled once. */
export class OutputSchemas {
  readonly #schemas = new Map<string, Tool["outputSchema"]>();
  readonly #checks = new Map<string, OutputCheck>();

  /** The schemas of `tools` (the whole list), in place of the last list's. */
  learn(tools: readonly Tool[]): void {
    this.#schemas.clear();
    this.#checks.clear();
    for (const tool of tools) {
      if (tool.outputSchema) this.#schemas.set(tool.name, tool.outputSchema);
    }
  }

  /**
   * `result` of tool `name`, checked against the output schema it was listed with: at once,
   * unless the schema's check is still to be compiled. One listed with a schema must answer
   * structured content that fits it, unless it answered an error.
   */
  checked(name: string, result: CallToolResult): CallToolResult | Promise<CallToolResult> {
    const schema = this.#schemas.get(name);
    if (schema === undefined) return result;
    const structured = result.structuredContent;
    if (!structured && !result.isError) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Tool ${name} has an output schema but did not return structured content`,
      );
    }
    if (!structured) return result;
    const check = this.#checks.get(name);
    if (check !== undefined) {
      check(structured);
      return result;
    }
    return outputChecker(schema).then((compiled) => {
      this.#checks.set(name, compiled);
      compiled(structured);
      return result;
    });
  }
}
