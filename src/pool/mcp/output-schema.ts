/**
 * A tool's output schema, checked against the structured content it answered (the SDK
 * Client's rule and messages). AJV (8 MB resident) loads with the first tool that has an
 * output schema and is called, not with the daemon; one instance serves every connection,
 * where each SDK Client built its own.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

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
