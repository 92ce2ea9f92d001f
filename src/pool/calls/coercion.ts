/**
 * Argument coercion: local models get argument types wrong
 * far more often than names — "5" for 5, "true" for true, an object serialised into a
 * string, "" for a parameter they meant to leave out. call() repairs what has only one
 * reading against the tool's own inputSchema, then refuses what still does not fit with a
 * message written for the model to correct from.
 *
 * | The model sent            | The schema says             | Sent as          |
 * | "5"                       | integer or number           | 5                |
 * | "true", "FALSE"           | boolean                     | true, false      |
 * | '{"a": 1}', '[1, 2]'      | object, array               | the parsed value |
 * | 5, true                   | string                      | "5", "true"      |
 * | "" or null, optional      | a type that is neither      | left out         |
 * | the whole input as JSON   |                             | the parsed object|
 *
 * Recursive through `properties` and `items`. Nothing is added, a property the schema does
 * not name passes through, and anyOf, $ref and formats are left to the server.
 */
import { McpPoolError } from "../core/errors.js";

type Schema = Record<string, unknown>;
type JsonType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The types a schema allows, or undefined when it says none (anyOf, $ref, {}): hands off. */
function typesOf(schema: unknown): JsonType[] | undefined {
  if (!isRecord(schema)) return undefined;
  const type = schema.type;
  if (typeof type === "string") return [type as JsonType];
  if (Array.isArray(type) && type.every((t) => typeof t === "string")) return type as JsonType[];
  return undefined;
}

function matches(value: unknown, type: JsonType): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isRecord(value);
    case "array":
      return Array.isArray(value);
    case "null":
      return value === null;
    default:
      // A type this code does not know is the server's to judge.
      return true;
  }
}

/** Whether `value` is one of `types`: a loop, not some()'s closure on every value a call checks. */
function matchesAny(value: unknown, types: readonly JsonType[]): boolean {
  for (const type of types) if (matches(value, type)) return true;
  return false;
}

/** A number written as a string, the way JSON would write it (surrounding spaces allowed). */
const NUMERIC = /^\s*-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The one reading of `value` as `type`, or undefined when there is none. */
function convert(value: unknown, type: JsonType): { value: unknown } | undefined {
  if (typeof value === "string") {
    if ((type === "number" || type === "integer") && NUMERIC.test(value)) {
      const number = Number(value);
      return matches(number, type) ? { value: number } : undefined;
    }
    if (type === "boolean") {
      const lower = value.trim().toLowerCase();
      if (lower === "true" || lower === "false") return { value: lower === "true" };
      return undefined;
    }
    if (type === "object" || type === "array") {
      const parsed = parseJson(value);
      return matches(parsed, type) ? { value: parsed } : undefined;
    }
    return undefined;
  }
  if (type === "string" && (typeof value === "number" || typeof value === "boolean")) {
    return { value: String(value) };
  }
  return undefined;
}

function coerceValue(value: unknown, schema: unknown): unknown {
  const types = typesOf(schema);
  let out = value;
  if (types !== undefined && !matchesAny(value, types)) {
    for (const type of types) {
      const converted = convert(value, type);
      if (converted) {
        out = converted.value;
        break;
      }
    }
  }
  if (!isRecord(schema)) return out;
  if (isRecord(out)) return coerceObject(out, schema);
  if (Array.isArray(out)) return coerceArray(out, schema);
  return out;
}

function coerceObject(value: Record<string, unknown>, schema: Schema): Record<string, unknown> {
  const properties = isRecord(schema.properties) ? schema.properties : undefined;
  if (properties === undefined) return value;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (property === undefined) {
      out[key] = item;
      continue;
    }
    const types = typesOf(property);
    // "" or null for an optional property whose type is neither: the model meant "absent".
    if (
      !required.has(key) &&
      types !== undefined &&
      ((item === "" && !types.includes("string")) || (item === null && !types.includes("null")))
    ) {
      continue;
    }
    out[key] = coerceValue(item, property);
  }
  return out;
}

function coerceArray(value: unknown[], schema: Schema): unknown[] {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : undefined;
  const items = schema.items;
  return value.map((item, i) => {
    if (prefix !== undefined && i < prefix.length) return coerceValue(item, prefix[i]);
    if (Array.isArray(items)) return i < items.length ? coerceValue(item, items[i]) : item;
    return isRecord(items) ? coerceValue(item, items) : item;
  });
}

/**
 * `input` repaired against `schema` where the repair has only one reading: see the table at
 * the top of this file. Never throws and never mutates `input`; what cannot be repaired is
 * left as it was for argumentProblems() to report. The whole input sent as a JSON string is
 * parsed first; anything else that is not an object comes back as it was.
 */
export function coerceArguments(input: unknown, schema: unknown): unknown {
  let value = input;
  if (typeof value === "string") {
    const parsed = parseJson(value);
    if (isRecord(parsed)) value = parsed;
  }
  if (!isRecord(value)) return value;
  return isRecord(schema) ? coerceObject(value, schema) : value;
}

const ARTICLE: Record<JsonType, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  null: "null",
};

/** A value as the model would recognise it: strings quoted, containers by kind. */
function shown(value: unknown): string {
  if (typeof value === "string") {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return String(value);
}

function describeTypes(types: readonly JsonType[]): string {
  const words = types.map((type) => ARTICLE[type] ?? type);
  return words.length <= 1
    ? (words[0] ?? "")
    : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

function check(value: unknown, schema: unknown, path: string, problems: string[]): void {
  const types = typesOf(schema);
  if (types !== undefined && !matchesAny(value, types)) {
    problems.push(`\`${path}\` must be ${describeTypes(types)}, got ${shown(value)}`);
    return;
  }
  if (!isRecord(schema)) return;
  if (isRecord(value)) checkObject(value, schema, `${path}.`, problems);
  else if (Array.isArray(value)) {
    const items = schema.items;
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : undefined;
    value.forEach((item, i) => {
      const itemSchema =
        prefix !== undefined && i < prefix.length
          ? prefix[i]
          : Array.isArray(items)
            ? items[i]
            : items;
      check(item, itemSchema, `${path}[${i}]`, problems);
    });
  }
}

function checkObject(
  value: Record<string, unknown>,
  schema: Schema,
  prefix: string,
  problems: string[],
): void {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  for (const [key, item] of Object.entries(value)) {
    if (Object.hasOwn(properties, key)) check(item, properties[key], `${prefix}${key}`, problems);
  }
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const key of required) {
    if (typeof key === "string" && value[key] === undefined) {
      problems.push(`missing required \`${prefix}${key}\``);
    }
  }
}

/**
 * What still does not fit `schema` after coercion, one phrase per problem, for a model to
 * correct from: `` `limit` must be an integer, got "abc" ``, `` missing required `path` ``.
 * Checks `type` and `required`, through properties and items; nothing else.
 */
export function argumentProblems(args: unknown, schema: unknown): string[] {
  if (!isRecord(args)) return [`the arguments must be an object, got ${shown(args)}`];
  const problems: string[] = [];
  if (isRecord(schema)) checkObject(args, schema, "", problems);
  return problems;
}

/** Whether a value fits its schema as it is: nothing to repair, nothing to report. */
type Fits = (value: unknown) => boolean;

const FITS_ANYTHING: Fits = () => true;

/** A schema's compiled check, per schema object: a tool's inputSchema is compiled once. */
const compiledChecks = new WeakMap<object, Fits>();

/**
 * `schema` compiled into one walk that says whether a value is already what coercion and
 * argumentProblems() would leave alone: every type matches, no optional "" or null to drop,
 * every required property there. Anything else takes the repairing path, so this only
 * decides when the arguments can be sent as given, without a copy.
 */
function compileCheck(schema: unknown): Fits {
  if (!isRecord(schema)) return FITS_ANYTHING;
  const cached = compiledChecks.get(schema);
  if (cached !== undefined) return cached;
  const types = typesOf(schema);
  const object = compileObjectCheck(schema);
  const array = compileArrayCheck(schema);
  const fits: Fits = (value) => {
    if (types !== undefined && !matchesAny(value, types)) return false;
    if (isRecord(value)) return object(value as Record<string, unknown>);
    if (Array.isArray(value)) return array(value);
    return true;
  };
  compiledChecks.set(schema, fits);
  return fits;
}

interface PropertyCheck {
  fits: Fits;
  /** An optional property coercion drops when it is "" (or null): its type allows neither. */
  dropsEmpty: boolean;
  dropsNull: boolean;
}

function compileObjectCheck(schema: Schema): Fits {
  const required = (Array.isArray(schema.required) ? schema.required : []).filter(
    (key): key is string => typeof key === "string",
  );
  const properties = new Map<string, PropertyCheck>();
  if (isRecord(schema.properties)) {
    for (const [key, property] of Object.entries(schema.properties)) {
      const types = typesOf(property);
      const optional = types !== undefined && !required.includes(key);
      properties.set(key, {
        fits: compileCheck(property),
        dropsEmpty: optional && !types.includes("string"),
        dropsNull: optional && !types.includes("null"),
      });
    }
  }
  return (value) => {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const property = properties.get(key);
      if (property === undefined) continue;
      const item = record[key];
      if ((item === "" && property.dropsEmpty) || (item === null && property.dropsNull)) {
        return false;
      }
      if (!property.fits(item)) return false;
    }
    for (const key of required) if (record[key] === undefined) return false;
    return true;
  };
}

function compileArrayCheck(schema: Schema): Fits {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems.map(compileCheck) : [];
  const items = schema.items;
  const tuple = Array.isArray(items) ? items.map(compileCheck) : undefined;
  const rest = isRecord(items) ? compileCheck(items) : FITS_ANYTHING;
  return (value) => {
    const list = value as unknown[];
    for (let i = 0; i < list.length; i++) {
      const fits = i < prefix.length ? prefix[i] : tuple !== undefined ? tuple[i] : rest;
      if (fits !== undefined && !fits(list[i])) return false;
    }
    return true;
  };
}

/**
 * The arguments call() sends: with `coerce`, repaired and checked, refused as
 * `invalid-arguments` when something still does not fit; without it, exactly as given
 * (an input that is not an object is sent as `{}`, as ever). Arguments that already fit
 * are sent as given: checked in one walk by the schema's compiled check, not copied.
 */
export function callArguments(
  qualified: string,
  input: unknown,
  schema: unknown,
  coerce: boolean,
): Record<string, unknown> {
  const given = input === undefined || input === null ? {} : input;
  if (!coerce) return isRecord(given) ? given : {};
  if (isRecord(given) && compileCheck(schema)(given)) return given;
  const args = coerceArguments(given, schema);
  const problems = argumentProblems(args, schema);
  if (problems.length > 0) {
    throw new McpPoolError(
      "invalid-arguments",
      `invalid arguments for "${qualified}": ${problems.join("; ")}`,
      { problems },
    );
  }
  return args as Record<string, unknown>;
}
