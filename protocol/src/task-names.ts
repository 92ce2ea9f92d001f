/**
 * The wire's methods about one host's tasks by its name (`taskOwner`): the ids the host knows
 * them by, kept by the daemon beside each task (a bridge session of several servers may give
 * a host a server's task under another id, as two servers made the same one, and a session
 * the daemon makes again after `mcpool restart` finds them here), and the host's going.
 */
import { fields, method, returns } from "./checks.js";
import type { Empty } from "./checks.js";

/** A host's task: its server's id and the id the host knows it by. */
export interface TaskName {
  serverId: string;
  taskId: string;
  hostId: string;
}

export const TASK_NAME_METHODS = {
  /** Host `taskOwner` knows task `taskId` of `serverId` by `hostId` from now on. */
  "tasks/name": method(
    fields({ serverId: "string", taskOwner: "string", taskId: "string", hostId: "string" }),
    returns<Empty>(),
  ),
  /** Host `taskOwner`'s tasks here (moved ones too), each by its server's id and the host's. */
  "tasks/names": method(fields({ taskOwner: "string" }), returns<{ tasks: TaskName[] }>()),
  /** The host `taskOwner` is gone: its live tasks are cancelled where the server can. */
  "tasks/release": method(fields({ taskOwner: "string" }), returns<Empty>()),
} as const;
