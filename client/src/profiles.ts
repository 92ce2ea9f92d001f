/**
 * What a bridge asks the daemon about its hosts' profiles: for a 2025-11-25 host that
 * declares roots, whose roots can be asked only once its `initialize` is answered, the
 * connections its project's children will be dialled on are opened while it waits for that
 * answer (`prepare`), as its servers would start direct, and let go of once its roots are
 * known and listed with (`release`); the connection's end lets go of what it held.
 */
import type { HostProfile, MethodName, ParamsOf, ResultOf } from "mcpool-protocol";

type Run = <M extends MethodName>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;

export class ProfileRequests {
  readonly #run: Run;

  constructor(run: Run) {
    this.#run = run;
  }

  /**
   * Opens ahead, held by `holder` (a name the caller makes, one per host session), what the
   * children of a host of `profile` (its roots not known yet) will be dialled on in `servers`
   * (every server when absent); resolves with those servers' ids once each is open or failed.
   */
  async prepare(
    profile: HostProfile,
    holder: string,
    servers?: readonly string[],
  ): Promise<string[]> {
    const params = { profile, holder, ...(servers !== undefined ? { servers: [...servers] } : {}) };
    return (await this.#run("profiles/prepare", params)).prepared;
  }

  /** `holder` lets go of what it asked for: what no child took and no other holder holds ends. */
  async release(holder: string): Promise<void> {
    await this.#run("profiles/release", { holder });
  }
}
