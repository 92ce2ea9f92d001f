/**
 * One catalog session's found tools: the qualified names its searches returned,
 * listed with it, least recently found or called leaving first past the limit.
 */
export class FoundTools {
  readonly #names = new Map<string, true>();

  constructor(readonly limit: number) {}

  /** Adds (or refreshes) `names`; true when the set a host lists changed. */
  add(names: readonly string[]): boolean {
    let changed = false;
    for (const name of names) {
      if (!this.#names.delete(name)) changed = true;
      this.#names.set(name, true);
    }
    while (this.#names.size > this.limit) {
      const oldest = this.#names.keys().next().value as string;
      this.#names.delete(oldest);
      changed = true;
    }
    return changed;
  }

  /** A call by name: the tool is used, so it leaves last. */
  touch(name: string): void {
    if (this.#names.delete(name)) this.#names.set(name, true);
  }

  has(name: string): boolean {
    return this.#names.has(name);
  }

  [Symbol.iterator](): IterableIterator<string> {
    return this.#names.keys();
  }
}
