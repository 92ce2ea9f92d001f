/**
 * `mcpool describe QUALIFIED` for people: one tool's names, title, annotations, token cost,
 * description and schemas. Everything in it is the server's text, so it is shown through the
 * terminal sanitiser; `--json` prints the ToolDescription as it came.
 */
import type { ToolDescription } from "mcpool-protocol";
import { terminalText } from "../output/terminal.js";
import { McpPoolError } from "mcpool-protocol";
import { EXIT } from "../output/exit-codes.js";
import type { CommandContext } from "./context.js";

export function describeText(info: ToolDescription): string {
  const hints = Object.entries(info.annotations ?? {})
    .filter(([key]) => key !== "title")
    .map(([key, value]) => terminalText(`${key}=${String(value)}`));
  const json = (value: unknown): string =>
    terminalText(JSON.stringify(value, null, 2), { multiline: true });
  return [
    `${info.name}  (server ${info.serverId}, tool ${terminalText(info.toolName)})`,
    ...(info.title ? [`title        ${terminalText(info.title)}`] : []),
    `annotations  ${hints.join(" ") || "none"}`,
    `tokens       ~${info.tokens}`,
    ...(info.description ? ["", terminalText(info.description, { multiline: true })] : []),
    "",
    "input schema:",
    json(info.inputSchema),
    ...(info.outputSchema ? ["", "output schema:", json(info.outputSchema)] : []),
    ...(info.meta ? ["", "_meta:", json(info.meta)] : []),
  ].join("\n");
}

/** `mcpool describe QUALIFIED`. */
export async function describeCommand(context: CommandContext): Promise<number> {
  const name = context.arg(0, "QUALIFIED tool name");
  return context.withClient(async (client) => {
    const info = await client.describe(name);
    if (!info) throw new McpPoolError("unknown-tool", `no server offers the tool "${name}"`);
    context.print(info, () => describeText(info));
    return EXIT.ok;
  });
}
