/**
 * The runtime half of a method descriptor: a check of a request's params, built from a
 * table of named fields. A check lets through the fields it does not name, so a newer client
 * may send more than an older daemon knows.
 */
import { isRecord } from "./values.js";

/** Returns what is wrong with a request's params, or undefined. Absent params arrive as {}. */
export type ParamsCheck = (params: Record<string, unknown>) => string | undefined;

/** One method: a runtime check of its params, and its types (phantom, never set). */
export interface MethodSpec<P, R> {
  readonly check: ParamsCheck;
  readonly types?: { params: P; result: R };
}

/** `id`: a JSON-RPC id or progress token, a string or a finite number. */
type FieldKind = "string" | "number" | "boolean" | "object" | "string[]" | "id";
type FieldSpec = Record<string, FieldKind | `${FieldKind}?`>;

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

/** A check of named fields; fields it does not name are let through for newer clients. */
export function fields(spec: FieldSpec): ParamsCheck {
  const entries = Object.entries(spec).map(([name, kind]) => {
    const optional = kind.endsWith("?");
    return { name, optional, kind: (optional ? kind.slice(0, -1) : kind) as FieldKind };
  });
  return (params) => {
    for (const { name, optional, kind } of entries) {
      const value = params[name];
      if (value === undefined && optional) continue;
      if (!IS[kind](value)) return `"${name}" must be ${DESCRIBED[kind]}`;
    }
    return undefined;
  };
}

export function method<P, R>(check: ParamsCheck): MethodSpec<P, R> {
  return { check };
}
