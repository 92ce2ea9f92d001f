/**
 * The runtime half of a method descriptor: a check of a request's params, built from a
 * table of named fields, whose type is the params the table lets through. A check lets
 * through the fields it does not name, so a newer client may send more than an older daemon
 * knows.
 */
import { isRecord } from "./values.js";

/**
 * Returns what is wrong with a request's params, or undefined. Absent params arrive as {}.
 * `P` is what a request that passes may be taken for (phantom, never set).
 */
export interface ParamsCheck<P = unknown> {
  (params: Record<string, unknown>): string | undefined;
  readonly params?: P;
}

/** What a check lets through: `P` of a ParamsCheck<P>. */
export type CheckedParams<C> = C extends ParamsCheck<infer P> ? P : never;

/** One method: a runtime check of its params, and its types (phantom, never set). */
export interface MethodSpec<P, R> {
  readonly check: ParamsCheck<P>;
  readonly types?: { params: P; result: R };
}

/** The params and the result a descriptor types. */
export type SpecParams<S> = S extends MethodSpec<infer P, unknown> ? P : never;
export type SpecResult<S> = S extends MethodSpec<unknown, infer R> ? R : never;

/** The params or result of a method that carries nothing. */
export type Empty = Record<string, never>;

/** What each kind of field holds once checked. `id`: a JSON-RPC id or progress token. */
interface KindTypes {
  string: string;
  number: number;
  boolean: boolean;
  object: Record<string, unknown>;
  "string[]": readonly string[];
  id: string | number;
}

type FieldKind = keyof KindTypes;

/** A field table: a kind per name, `?` after it when the field may be absent. */
export type FieldSpec = Readonly<Record<string, FieldKind | `${FieldKind}?`>>;

/** The params a field table lets through: a key per field, optional where the kind ends in `?`. */
export type TableParams<S extends FieldSpec> = Flat<
  {
    -readonly [K in keyof S as S[K] extends FieldKind ? K : never]: KindTypes[S[K] & FieldKind];
  } & {
    -readonly [
      K in keyof S as S[K] extends FieldKind ? never : K
    ]?: S[K] extends `${infer B extends FieldKind}?` ? KindTypes[B] : never;
  }
>;

type Flat<T> = { [K in keyof T]: T[K] };

/**
 * The kinds a table may give a field of type `T`: those whose check `T`'s values pass. An
 * interface is no Record, so `object` is matched by any non-array object type.
 */
type KindsFor<T> = {
  [K in FieldKind]: [T] extends [K extends "object" ? object : KindTypes[K]]
    ? K extends "object"
      ? [T] extends [readonly unknown[]]
        ? never
        : K
      : K
    : never;
}[FieldKind];

/** The table of `P`: every key of `P` named, with a kind its values pass, `?` where optional. */
export type SpecOf<P> = {
  readonly [K in keyof P]-?: Partial<Pick<P, K>> extends Pick<P, K>
    ? `${KindsFor<Exclude<P[K], undefined>>}?`
    : KindsFor<P[K]>;
};

const IS: Record<FieldKind, (value: unknown) => boolean> = {
  string: (value) => typeof value === "string",
  number: (value) => typeof value === "number" && Number.isFinite(value) && value >= 0,
  boolean: (value) => typeof value === "boolean",
  object: isRecord,
  "string[]": (value) => Array.isArray(value) && value.every((item) => typeof item === "string"),
  id: (value) => typeof value === "string" || (typeof value === "number" && Number.isFinite(value)),
};

const DESCRIBED: Record<FieldKind, string> = {
  string: "a string",
  number: "a non-negative number",
  boolean: "a boolean",
  object: "an object",
  "string[]": "an array of strings",
  id: "a string or a number",
};

/**
 * A check of named fields, whose params type is read off the table (TableParams); fields it
 * does not name are let through for newer clients.
 */
export function fields<const S extends FieldSpec>(spec: S): ParamsCheck<TableParams<S>> {
  const entries = Object.entries(spec).map(([name, kind]) => {
    const optional = kind.endsWith("?");
    return { name, optional, kind: (optional ? kind.slice(0, -1) : kind) as FieldKind };
  });
  const named = new Map(entries.map((entry) => [entry.name, entry]));
  const required = entries.filter((entry) => !entry.optional);
  /** The first problem in the table's order. */
  const problem = (params: Record<string, unknown>): string | undefined => {
    for (const { name, optional, kind } of entries) {
      const value = params[name];
      if (value === undefined && optional) continue;
      if (!IS[kind](value)) return `"${name}" must be ${DESCRIBED[kind]}`;
    }
    return undefined;
  };
  // A request names a few of its method's many optional fields (tools/call has 23): the
  // fields it sent are checked, and the required ones, not every field the table names; the
  // table's walk runs only to name a problem there is.
  return (params) => {
    for (const name in params) {
      const entry = named.get(name);
      const value = params[name];
      if (entry !== undefined && value !== undefined && !IS[entry.kind](value)) {
        return problem(params);
      }
    }
    for (const { name, kind } of required) if (!IS[kind](params[name])) return problem(params);
    return undefined;
  };
}

/**
 * A check of the fields of a params type richer than a table can say (a known object shape,
 * a union of strings): the table names every key of `P` and checks what a kind can, and a
 * passing request is taken for a `P`.
 */
export function fieldsOf<P>(spec: SpecOf<P>): ParamsCheck<P> {
  return fields(spec as FieldSpec) as ParamsCheck<P>;
}

/** The result type of a method, for method(): phantom, never read. */
export interface Returns<R> {
  readonly result?: R;
}

const RETURNS: Returns<never> = Object.freeze({});

export function returns<R>(): Returns<R> {
  return RETURNS;
}

/** A descriptor: its params are what `check` lets through, its result is `returns<R>()`'s. */
export function method<P, R>(check: ParamsCheck<P>, _result: Returns<R>): MethodSpec<P, R> {
  return { check };
}
