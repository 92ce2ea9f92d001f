/**
 * `mcpool tools [--server ID]` and `mcpool search QUERY [--server ID] [--limit N]`: the
 * tools agents are offered, all of them or the best matches of a query, as a table.
 */
import { EXIT } from "../output/exit-codes.js";
import { cell, table } from "../output/format.js";
import { requireServer } from "../output/messages.js";
import { UsageError } from "../output/usage-error.js";
import type { CommandContext } from "./context.js";

export function toolsCommand(context: CommandContext<{ server?: string }>): Promise<number> {
  const { server } = context.flags;
  return context.withClient(async (client) => {
    await requireServer(client, server);
    const tools = await client.tools(server ? { servers: [server] } : {});
    context.print(tools, () =>
      tools.length === 0
        ? "no tools"
        : table(
            ["TOOL", "DESCRIPTION"],
            tools.map((t) => [t.function.name, cell(t.function.description, 80)]),
          ),
    );
    return EXIT.ok;
  });
}

export async function searchCommand(
  context: CommandContext<{ server?: string; limit?: string }>,
): Promise<number> {
  const { server } = context.flags;
  const query = context.args.join(" ");
  if (query.trim() === "") throw new UsageError("search needs a QUERY");
  const limit = context.flags.limit === undefined ? undefined : Number(context.flags.limit);
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
    throw new UsageError("search --limit must be a whole number > 0");
  }
  return context.withClient(async (client) => {
    await requireServer(client, server);
    const found = await client.search(query, {
      ...(server ? { servers: [server] } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    const rows = found.flatMap((s) =>
      s.tools.map((t) => [t.name, s.id, cell(t.description ?? t.title, 70)]),
    );
    context.print(found, () =>
      rows.length === 0 ? "no tools match" : table(["TOOL", "SERVER", "DESCRIPTION"], rows),
    );
    return EXIT.ok;
  });
}
