/**
 * The two value helpers both sides of the wire need, written once: a JSON object test and
 * the "leave out what is undefined" copy that params and options go through.
 */

/** A plain JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `T` as defined() leaves it: a key that may hold undefined becomes optional, without the
 * undefined, so the copy fits a shape whose optional keys may be absent but never undefined
 * (`exactOptionalPropertyTypes`).
 */
export type Defined<T> = {
  [K in keyof T as undefined extends T[K] ? never : K]: T[K];
} & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/**
 * A copy without the keys whose value is undefined: on the wire and to the pool, an absent
 * key and one set to undefined may mean different things (MCP params are strict about it).
 */
export function defined<T extends object>(value: T): Defined<T> {
  const out: Record<string, unknown> = {};
  // Keys, not entries: one array a copy rather than a pair array for every key.
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) out[key] = item;
  }
  return out as Defined<T>;
}

/**
 * `List` when it names every member of `Union`, else `never`: a constant listing a union's
 * members, declared apart from the union (HOOK_EVENTS beside HookEvent), stops compiling
 * when the union gains a member the list lacks.
 */
export type Covering<Union, List extends readonly unknown[]> = [
  Exclude<Union, List[number]>,
] extends [never]
  ? List
  : never;
