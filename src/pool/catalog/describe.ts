/**
 * describe(): everything a server said
 * about one tool that an OpenAI definition cannot carry — annotations, title, the untouched
 * input schema, the output schema, `_meta`, `icons` and `execution` — for a host deciding whether a call needs a
 * person's approval. Annotations are the server's claims, not facts.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolAnnotations, ToolDescription } from "../core/types.js";

export function describeTool(
  tool: Tool,
  at: { qualified: string; serverId: string; tokens: number; hidden: boolean },
): ToolDescription {
  const title = tool.title ?? tool.annotations?.title;
  return structuredClone({
    name: at.qualified,
    serverId: at.serverId,
    toolName: tool.name,
    ...(title !== undefined ? { title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations as ToolAnnotations } : {}),
    inputSchema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema !== undefined
      ? { outputSchema: tool.outputSchema as Record<string, unknown> }
      : {}),
    ...(tool._meta !== undefined ? { meta: tool._meta } : {}),
    ...(tool.icons !== undefined ? { icons: tool.icons as Record<string, unknown>[] } : {}),
    ...(tool.execution !== undefined
      ? { execution: tool.execution as Record<string, unknown> }
      : {}),
    tokens: at.tokens,
    ...(at.hidden ? { hidden: true } : {}),
  });
}
