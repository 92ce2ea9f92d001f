/**
 * A host's `tasks/list` of one server (tasks.ts keeps the records): direct, a session's list
 * names only its own tasks. The pool's connections are shared, and a row's children (its own,
 * a host profile's) each make their task ids on their own, so the list walks the server's
 * pages on each connection holding some of the host's tasks and keeps, of each, only the ids
 * the host's tasks have there; all in one page (the server's cursors page a list that is not
 * the host's).
 */
import type { Connection } from "../server/connection.js";
import type { ServerEntry } from "../server/entry.js";
import { sendTask } from "./task-requests.js";
import { taskOf } from "./task-holds.js";
import type { PoolTasksDeps, TaskRequestOptions } from "./tasks.js";

type Params = Record<string, unknown>;

/** A bound on the server's pages walked on one connection for one `tasks/list`. */
const MAX_PAGES = 50;

/** One of the host's tasks: the child that made it, the connection it lives on, its id. */
export interface ListedTask {
  readonly entry: ServerEntry;
  readonly connection: Connection;
  readonly taskId: string;
}

/** The host's tasks of `row`'s server, `mine` being the host's records of it. */
export async function listTasks(
  deps: PoolTasksDeps,
  row: ServerEntry,
  mine: readonly ListedTask[],
  params: Params,
  options: TaskRequestOptions,
): Promise<Params> {
  // A cursor the host was never given is the server's to refuse, as direct.
  if (params.cursor !== undefined) {
    const ids = new Set(mine.filter((r) => r.entry === row).map((r) => r.taskId));
    const page = await sendTask(deps, row, "tasks/list", params, options, () => row.ensure());
    return { ...page, tasks: own(page, ids), nextCursor: undefined };
  }
  const places = new Map<Connection, { entry: ServerEntry; ids: Set<string> }>();
  for (const r of mine) {
    const place = places.get(r.connection) ?? { entry: r.entry, ids: new Set<string>() };
    place.ids.add(r.taskId);
    places.set(r.connection, place);
  }
  let first: Params | undefined;
  const tasks: unknown[] = [];
  const walk = async (
    entry: ServerEntry,
    ids: ReadonlySet<string>,
    at: () => Promise<Connection>,
  ): Promise<void> => {
    let cursor: unknown;
    for (let page = 0; page < MAX_PAGES; page++) {
      const asked = cursor === undefined ? {} : { cursor };
      const result = await sendTask(deps, entry, "tasks/list", asked, options, at);
      first ??= result;
      tasks.push(...own(result, ids));
      cursor = result.nextCursor;
      if (typeof cursor !== "string") return;
    }
  };
  // No task of the host's lives: the row's connection, if it has one, answers (an empty list,
  // or its refusal); none is started to say so.
  if (places.size === 0) {
    const live = row.connection;
    if (live === undefined) return { tasks: [] };
    await walk(row, new Set(), async () => live);
  }
  for (const [connection, { entry, ids }] of places) {
    await walk(entry, ids, async () => connection);
  }
  const { nextCursor: _, ...rest } = first ?? {};
  return { ...rest, tasks };
}

/** The tasks of `page` whose ids are in `ids`. */
function own(page: Params, ids: ReadonlySet<string>): unknown[] {
  const tasks = Array.isArray(page.tasks) ? page.tasks : [];
  return tasks.filter((t) => ids.has(taskOf(t)?.taskId ?? ""));
}
