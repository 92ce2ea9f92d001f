/**
 * The ids a host knows its tasks by, kept by the daemon beside each task: a bridge session of
 * several servers may give a host a server's task under another id (two servers made the
 * same one), and a session the daemon makes again after `mcpool restart` finds them here.
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
} as const;
