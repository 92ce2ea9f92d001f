/**
 * What the daemon could not save: each store's last failed save
 * (ENOSPC, EROFS, EACCES…), with its folder and what the failure costs, shown by `status`
 * until a later save of that store succeeds. A failed save fails only itself: calls go on.
 */
import type { SaveProblem } from "mcpool-protocol";

export type { SaveProblem } from "mcpool-protocol";

export class SaveHealth {
  readonly #problems = new Map<string, SaveProblem>();

  /** `store`'s save into `folder` failed with `error`; `effect`: what that costs. */
  failed(store: string, folder: string, error: unknown, effect: string): void {
    const code = (error as NodeJS.ErrnoException)?.code ?? "error";
    const since = this.#problems.get(store)?.since ?? Date.now();
    this.#problems.set(store, { store, folder, code, effect, since });
  }

  /** A save of `store` succeeded: its problem, if any, is over. */
  saved(store: string): void {
    this.#problems.delete(store);
  }

  /** Runs a save of `store`, noting how it went; its failure is still thrown. */
  async track<T>(
    store: string,
    folder: string,
    effect: string,
    save: () => Promise<T>,
  ): Promise<T> {
    try {
      const result = await save();
      this.saved(store);
      return result;
    } catch (error) {
      this.failed(store, folder, error, effect);
      throw error;
    }
  }

  state(): SaveProblem[] {
    return [...this.#problems.values()];
  }
}

/** What each store's failed save costs, as `status` says it. */
export const SAVE_EFFECTS = {
  children: "children not recorded: a daemon crash would leave them running",
  "tools-cache": "tool lists not cached: after a restart, tools wait for their servers to start",
  usage: "call counts not saved: a restart loses those since the last good save",
  pins: "tool approvals not saved: a restart asks for them again",
  tokens: "sign-ins not saved: a restart asks to sign in again",
  "cold-answers":
    "first answers not kept: an entry that starts the daemon makes its host wait for the server",
  "cold-answers-pool":
    "the pool's first answers not kept: a pool entry that starts the daemon makes its host wait",
} as const;
