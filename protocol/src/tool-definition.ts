/** An OpenAI-shaped function definition, as tools() hands it out (frozen). */
export interface ToolDefinition {
  type: "function";
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}
