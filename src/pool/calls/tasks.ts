/**
 * MCP tasks relayed (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks):
 * a task-augmented `tools/call` goes to the server with its `task` and answers the server's
 * CreateTaskResult; this room keeps one record per task the pool created — the connection
 * that created it and the host that owns it — so `tasks/get`, `tasks/result`, `tasks/list`
 * and `tasks/cancel` reach that connection, and only for that host.
 *
 * Direct, a server's tasks are its session's: another session's id is "not found", and
 * `tasks/list` names only the session's own. A record is its child's (a row's own, or a host
 * profile's: one per project's roots), as each child's server makes its task ids on its own:
 * a status goes by the child that sent it, and a host's request to the child of its record.
 * The pool's connection is shared, so:
 * - a host asking about a task it does not own hears what the server says of an unknown
 *   task: the request is sent with an id no task has, and the answer given back with the
 *   host's id in it;
 * - `tasks/list` walks the server's pages on each connection holding the host's tasks and
 *   answers the host's own, in one page (the server's cursors page a list that is not the
 *   host's);
 * - a server's `notifications/tasks/status` goes to the owning host alone.
 *
 * A connection holding a live task is counted in flight (no idle rule reaps or swaps it) until
 * the task is seen terminal or its ttl runs out. A host that goes has its live tasks cancelled
 * where the server offers `tasks.cancel`: direct, the session's end ends the server and its work.
 */
import { McpPoolError } from "../core/errors.js";
import type { CallSignal, ServerNotification } from "../core/types.js";
import type { Connection } from "../server/connection.js";
import type { ServerEntry } from "../server/entry.js";
import { EarlyStatuses } from "./early-statuses.js";
import {
  MovedRecords,
  type MovedTask,
  type TaskName,
  type TaskPlace,
  type Unclaimed,
} from "./moved-records.js";
import { askAsStranger, sendTask } from "./task-requests.js";
import { listTasks } from "./task-list.js";
import {
  childKey,
  childOf,
  ended,
  hold,
  lostTask,
  recordKey,
  taskOf,
  type TaskChild,
} from "./task-holds.js";

export const TASK_METHODS = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"] as const;
export type TaskMethod = (typeof TASK_METHODS)[number];

/** The states after which a task changes no more (the spec's terminal statuses). */
const TERMINAL = new Set(["completed", "failed", "cancelled"]);
/** How long a task with no ttl (unlimited) holds its connection at most, ms. */
const UNBOUNDED_TTL_HOLD_MS = 60 * 60_000;

/** Who owns a task: an opaque key, and where its status notifications go. */
export interface TaskOwner {
  key: string;
  /**
   * The name the owning host goes by beside its connection (the `taskOwner` a bridge
   * session chose): a task whose record moved to a new daemon is found again by it.
   */
  name?: string;
  notify?: (serverId: string, notification: ServerNotification) => void;
}

interface TaskRecord {
  /** By its child, connection and id (recordKey): a task id is its child's process's making. */
  readonly key: string;
  readonly taskId: string;
  /** The id its host knows it by, when not the server's (a bridge of several servers renamed it). */
  hostId?: string;
  readonly entry: ServerEntry;
  readonly connection: Connection;
  owner: TaskOwner;
  status: string;
  /** Ends the hold on the connection (once). */
  release: () => void;
  expiry: NodeJS.Timeout;
  expiresAt: number;
  ttl: number | null;
  /** Moved from a previous daemon, and not yet asked about by its owner's new connection. */
  moved?: Unclaimed;
}

/** A moved record adopt() did not take up, and why. */
export interface LeftTask {
  task: MovedTask;
  why: string;
}

export interface PoolTasksDeps {
  /** The row's entry; throws `unknown-server`. */
  entry(id: string): ServerEntry;
  /** The call timeout that applies to `entry`, ms. */
  timeoutMs(entry: ServerEntry): number | undefined;
}

export interface TaskRequestOptions {
  signal?: CallSignal;
}

type Params = Record<string, unknown>;

export class PoolTasks {
  readonly #deps: PoolTasksDeps;
  /** By child, connection and task id (recordKey). */
  readonly #records = new Map<string, TaskRecord>();
  readonly #early = new EarlyStatuses();
  readonly #moved = new MovedRecords();
  /**
   * Handing over: a host that goes (its connection closes as the daemon hands over) changes
   * nothing here, so every record moves; what it asked is done if the hand-over fails.
   */
  #handedOff = false;
  readonly #deferred: { gone: string | TaskOwner; disconnected: boolean }[] = [];

  constructor(deps: PoolTasksDeps) {
    this.#deps = deps;
  }

  /**
   * A task-augmented call to `entry` is sent: a status of a task not yet answered is kept
   * until the returned function is called (after `created`, or on failure).
   */
  asking(entry: ServerEntry): () => void {
    return this.#early.asking(childKey(childOf(entry)));
  }

  /**
   * A task-augmented call on `connection` answered `result`: its task is `owner`'s, and the
   * statuses the server sent of it before answering go to `owner` now. A call `withdrawn`
   * meanwhile (its host went, or gave it up) has its task released at once.
   */
  created(
    entry: ServerEntry,
    connection: Connection,
    result: unknown,
    owner: TaskOwner,
    withdrawn?: CallSignal,
  ): void {
    const task = taskOf((result as { task?: unknown } | undefined)?.task);
    if (task === undefined) return;
    const child = childOf(entry);
    const key = recordKey(child, connection, task.taskId);
    // Made again by the same process: the new record is kept, and found as the later made.
    const old = this.#records.get(key);
    if (old !== undefined) this.#drop(old);
    const record: TaskRecord = {
      key,
      taskId: task.taskId,
      entry,
      connection,
      owner,
      status: task.status ?? "working",
      release: hold(entry, connection),
      expiry: undefined as unknown as NodeJS.Timeout,
      expiresAt: 0,
      ttl: task.ttl ?? null,
    };
    this.#records.set(key, record);
    this.#expireAfter(record);
    if (TERMINAL.has(record.status)) record.release();
    for (const early of this.#early.claim(childKey(child), task.taskId)) {
      this.status(entry.id, early, connection, child.profileKey);
    }
    // The call was withdrawn (its host went) before the answer came: no host knows the task.
    if (withdrawn?.aborted === true) void this.#end(record);
  }

  /**
   * A status `connection` sent (a process of `serverId`'s child; `profileKey`: a profile's,
   * none: the row's own): to the owner of that process's task alone (not a former process's
   * of its id), or kept while a task-augmented call may yet name the task; false if neither.
   */
  status(
    serverId: string,
    notification: ServerNotification,
    connection: Connection,
    profileKey?: string,
  ): boolean {
    if (notification.method !== "notifications/tasks/status") return false;
    const task = taskOf(notification.params);
    if (task === undefined) return false;
    const child: TaskChild = { serverId, profileKey };
    const record = this.#records.get(recordKey(child, connection, task.taskId));
    if (record === undefined) {
      return (
        this.#moved.keep(child, task.taskId, notification) ||
        this.#early.keep(childKey(child), task.taskId, notification)
      );
    }
    if (task.status !== undefined) this.#saw(record, task.status);
    // A moved record's host has no connection here yet: it hears the status as it claims it.
    if (record.moved !== undefined) record.moved.missed = notification;
    else record.owner.notify?.(serverId, notification);
    return true;
  }

  /** `tasks/get|result|list|cancel` of server `serverId` for `asking` (its key, or itself). */
  async request(
    serverId: string,
    method: TaskMethod,
    params: Params,
    asking: string | TaskOwner,
    options: TaskRequestOptions = {},
  ): Promise<Params> {
    const owner = typeof asking === "string" ? { key: asking } : asking;
    // A record of this host's that moves with a hand-over is taken up before it is asked about.
    // A request whose host went meanwhile claims nothing: its records stay the host's by name.
    await this.#moved.settled(serverId, owner.name, options.signal);
    if (options.signal?.aborted === true) throw options.signal.reason;
    if (method === "tasks/list") return this.#list(serverId, params, owner, options);
    const taskId = params.taskId;
    if (typeof taskId !== "string") {
      throw new McpPoolError("invalid-arguments", `${method} needs a string "taskId"`, {
        serverId,
      });
    }
    const record = this.#recordOf(serverId, taskId, owner);
    if (record === undefined) {
      return askAsStranger(this.#deps, serverId, method, params, taskId, options);
    }
    if (ended(record)) throw lostTask(serverId, taskId); // a new process has other tasks
    const result = await sendTask(
      this.#deps,
      record.entry,
      method,
      params,
      options,
      async () => record.connection,
    );
    if (method === "tasks/result") this.#saw(record, "completed");
    else {
      const status = taskOf(result)?.status;
      if (status !== undefined) this.#saw(record, status);
    }
    return result;
  }

  /**
   * `owner` is gone: its live tasks are cancelled on servers that offer cancel, and its
   * records dropped (their holds released). `disconnected`: only its connection closed (a
   * host with a name may come back on another, as after a hand-over).
   */
  async release(gone: string | TaskOwner, disconnected = false): Promise<void> {
    const owner: TaskOwner = typeof gone === "string" ? { key: gone } : gone;
    // A host that goes while its records are moving: they are dealt with once they exist (a
    // release waits for the adoption as a request does, so order decides, not timing).
    if (this.#moved.expects(owner.name)) {
      await this.#moved.settled(undefined, owner.name).catch(() => undefined);
    }
    if (this.#handedOff) {
      this.#deferred.push({ gone, disconnected });
      return;
    }
    // Its own records only: a moved record a host never claimed here is not this one's to end
    // (a release queued before a hand-over must not cancel the tasks that just moved).
    const mine = [...this.#records.values()].filter((r) => r.owner.key === owner.key);
    await Promise.all(mine.map((record) => this.#end(record)));
  }

  /** Drops `record`, and cancels its live task on a server that offers cancel. */
  async #end(record: TaskRecord): Promise<void> {
    this.#drop(record);
    const cancels = (record.connection.capabilities?.tasks as { cancel?: unknown } | undefined)
      ?.cancel;
    if (TERMINAL.has(record.status) || cancels === undefined) return;
    if (record.entry.connection !== record.connection) return;
    await record.connection.client
      .request({ method: "tasks/cancel", params: { taskId: record.taskId } })
      .catch(() => undefined);
  }

  /** A hand-over begins, before any connection closes: a host that goes changes nothing. */
  holdReleases(): void {
    this.#handedOff = true;
  }

  /**
   * The records that move with their servers to a new daemon: those of a host with a name,
   * on a child `placeOf` tells (a row's own, a profile's). Every hold ends, so the hand-over
   * waits on no task as it would on a call.
   */
  handOff(placeOf: (entry: ServerEntry) => { profileKey?: string } | undefined): MovedTask[] {
    this.#handedOff = true;
    const moved: MovedTask[] = [];
    for (const record of this.#records.values()) {
      record.release();
      const place = placeOf(record.entry);
      const owner = record.owner.name;
      if (place === undefined || owner === undefined) continue;
      const { taskId, hostId, status, ttl, expiresAt } = record;
      const moving = { taskId, ...(hostId === undefined ? {} : { hostId }), owner, status };
      moved.push({ serverId: record.entry.id, ...place, ...moving, ttl, expiresAt });
    }
    return moved;
  }

  /**
   * The hand-over failed: the live tasks hold their connections again. A host with a name
   * whose connection the hand-over closed comes back to this daemon as it would have to the
   * new one, so its records are kept for it by name, as a new daemon adopts them (a live one
   * holds its child from the idle rule for `holdMs` while unclaimed); the hosts that really
   * went meanwhile (a release asked for, or nameless) are released now.
   */
  resume(holdMs: number): void {
    this.#handedOff = false;
    for (const record of this.#records.values()) {
      if (TERMINAL.has(record.status)) continue;
      record.release = hold(record.entry, record.connection);
      if (record.moved !== undefined) this.#holdUnclaimed(record, holdMs);
    }
    for (const { gone, disconnected } of this.#deferred.splice(0)) {
      const name = typeof gone === "string" ? undefined : gone.name;
      if (!disconnected || name === undefined) {
        void this.release(gone);
        continue;
      }
      const key = (gone as TaskOwner).key;
      for (const record of this.#records.values()) {
        if (record.owner.key !== key) continue;
        record.owner = { key: `\0moved\0${name}`, name };
        record.moved = this.#moved.unclaimed(name);
        if (!TERMINAL.has(record.status)) this.#holdUnclaimed(record, holdMs);
      }
    }
  }

  /** The records a previous daemon hands over, known before this pool serves anyone. */
  expect(tasks: readonly MovedTask[], onWait?: () => void): void {
    this.#moved.expect(tasks, onWait);
  }

  /** The adoption failed (`why`): no record is taken up, and who waited for them is told. */
  forgo(why: string): void {
    this.#moved.conclude(why);
  }

  /**
   * The records a previous daemon handed over, each on the child `place` finds serving here
   * (one not found, or expired, is left); each is its host's by name until the host's new
   * connection asks about it. A live one holds its child from the idle rule for `holdMs`
   * while unclaimed (the host's entry dials again within it), then no longer; its owner may
   * still claim it until it expires. Returns the records left, each with why.
   */
  adopt(tasks: readonly MovedTask[], place: TaskPlace, holdMs: number): LeftTask[] {
    const now = Date.now();
    const left: LeftTask[] = [];
    for (const task of tasks) {
      const found = this.#adoptable(task, place, now);
      if (typeof found === "string") {
        left.push({ task, why: found });
        continue;
      }
      const { entry, connection, key } = found;
      const live = !TERMINAL.has(task.status);
      const record: TaskRecord = {
        key,
        taskId: task.taskId,
        ...(task.hostId === undefined ? {} : { hostId: task.hostId }),
        entry,
        connection,
        owner: { key: `\0moved\0${task.owner}`, name: task.owner },
        status: task.status,
        release: live ? hold(entry, connection) : () => undefined,
        expiry: undefined as unknown as NodeJS.Timeout,
        expiresAt: 0,
        ttl: task.ttl,
        moved: this.#moved.unclaimed(task.owner, task),
      };
      this.#records.set(key, record);
      this.#expireAfter(record, task.expiresAt - now);
      if (live) this.#holdUnclaimed(record, holdMs);
      const missed = taskOf(record.moved?.missed?.params)?.status;
      if (missed !== undefined) this.#saw(record, missed);
    }
    this.#moved.conclude();
    return left;
  }

  /** Where a moved record is taken up: its child's entry and connection, or why it is not. */
  #adoptable(
    task: MovedTask,
    place: TaskPlace,
    now: number,
  ): { entry: ServerEntry; connection: Connection; key: string } | string {
    const entry = place(task.serverId, task.profileKey);
    const connection = entry?.connection;
    if (entry === undefined) return "its child is not served here";
    if (connection === undefined) return "its child has no connection";
    if (task.expiresAt <= now) return "it expired";
    const key = recordKey(childOf(entry), connection, task.taskId);
    if (this.#records.has(key)) return "a record of that task is kept already";
    return { entry, connection, key };
  }

  /** After `holdMs` (from now: its own deadline), `record` unclaimed holds its child no longer. */
  #holdUnclaimed(record: TaskRecord, holdMs: number): void {
    if (record.moved !== undefined)
      this.#moved.holdFor(record.moved, () => record.release(), holdMs);
  }

  /** The pool shuts down: no task holds its connection any more, and no record is kept. */
  close(): void {
    this.#moved.conclude("the daemon stopped before it took over its task records");
    for (const record of [...this.#records.values()]) this.#drop(record);
  }

  /** How many task records the pool keeps (live or not yet expired). */
  get size(): number {
    return this.#records.size;
  }

  /**
   * `owner`'s record of task `taskId` on server `serverId`, made by whichever of the row's
   * children (several may make that id, each for its own host); a moved record of the host's
   * by name is claimed. Of two of the host's own, the later made.
   */
  #recordOf(serverId: string, taskId: string, owner: TaskOwner): TaskRecord | undefined {
    const same = [...this.#records.values()].filter(
      (r) => r.entry.id === serverId && r.taskId === taskId,
    );
    const own = same.filter((r) => r.owner.key === owner.key).at(-1);
    return own ?? same.find((r) => this.#owns(r, owner));
  }

  /** A host's tasks on `serverId` (task-list.ts). */
  #list(
    serverId: string,
    params: Params,
    owner: TaskOwner,
    options: TaskRequestOptions,
  ): Promise<Params> {
    // A task whose process ended is in no server's list any more.
    const mine = [...this.#records.values()].filter(
      (r) => r.entry.id === serverId && this.#owns(r, owner) && !ended(r),
    );
    return listTasks(this.#deps, this.#deps.entry(serverId), mine, params, options);
  }

  /**
   * Host `name`'s tasks by its server's id and its own (moved ones once taken up, unclaimed),
   * so a session made again finds its ids; `naming`: the host knows that one so from now on.
   */
  async names(name: string, naming?: TaskName): Promise<TaskName[]> {
    await this.#moved.settled(undefined, name);
    const records = [...this.#records.values()];
    const hers = records.filter((r) => (r.moved?.name ?? r.owner.name) === name);
    const named = hers.find((r) => r.entry.id === naming?.serverId && r.taskId === naming.taskId);
    if (named !== undefined && naming !== undefined) named.hostId = naming.hostId;
    return hers.map((r) => ({
      serverId: r.entry.id,
      taskId: r.taskId,
      hostId: r.hostId ?? r.taskId,
    }));
  }

  /**
   * Whether `record` is `owner`'s. A record moved from a previous daemon is its host's by
   * name: the first of the host's new connection to ask about it owns it from then on.
   */
  #owns(record: TaskRecord, owner: TaskOwner): boolean {
    if (record.owner.key === owner.key) return true;
    const moved = record.moved;
    if (moved === undefined || owner.name !== moved.name) return false;
    record.owner = owner;
    delete record.moved;
    const missed = this.#moved.claimed(moved);
    if (missed !== undefined) owner.notify?.(record.entry.id, missed);
    return true;
  }

  /** A status seen for `record`: a terminal one ends the hold, the record kept for its ttl. */
  #saw(record: TaskRecord, status: string): void {
    record.status = status;
    if (!TERMINAL.has(status)) return;
    record.release();
    // The server keeps a finished task for its ttl from now (the SDK's store does).
    clearTimeout(record.expiry);
    this.#expireAfter(record);
  }

  #expireAfter(record: TaskRecord, ms = record.ttl ?? UNBOUNDED_TTL_HOLD_MS): void {
    record.expiresAt = Date.now() + ms;
    record.expiry = setTimeout(() => {
      if (this.#records.get(record.key) === record) this.#drop(record);
    }, ms);
    record.expiry.unref();
  }

  #drop(record: TaskRecord): void {
    clearTimeout(record.expiry);
    if (record.moved !== undefined) this.#moved.claimed(record.moved);
    record.release();
    if (this.#records.get(record.key) === record) this.#records.delete(record.key);
  }
}
