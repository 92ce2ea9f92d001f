/**
 * Arguments for a tool, made from its inputSchema alone and the same every run: a property's
 * `default`, else its first `enum`/`const`/example value, else a plain value of its type
 * (strings from the property's name, numbers from its bounds). Every property is filled,
 * required or not, so each field the server reads is exercised.
 */
type Schema = Record<string, unknown>;

/** A value for `schema`, named `name` (strings are made from it). */
export function valueFor(schema: Schema | undefined, name: string, depth = 0): unknown {
  if (schema === undefined || depth > 6) return name;
  if ("default" in schema) return schema.default;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      const first = options.find((o: Schema) => o.type !== "null") ?? options[0];
      return valueFor(first as Schema, name, depth + 1);
    }
  }
  const type = Array.isArray(schema.type)
    ? (schema.type as string[]).find((t) => t !== "null")
    : schema.type;
  switch (type) {
    case "string":
      return stringFor(schema, name);
    case "integer":
    case "number":
      return numberFor(schema);
    case "boolean":
      return false;
    case "array": {
      const min = typeof schema.minItems === "number" ? schema.minItems : 1;
      const item = schema.items as Schema | undefined;
      return Array.from({ length: Math.max(1, min) }, () => valueFor(item, name, depth + 1));
    }
    case "null":
      return null;
    default:
      return objectFor(schema, depth);
  }
}

function stringFor(schema: Schema, name: string): string {
  if (schema.format === "uri" || /uri|url/i.test(name)) return "https://example.com/";
  if (schema.format === "date-time") return "2026-01-01T00:00:00Z";
  if (schema.format === "date") return "2026-01-01";
  if (schema.format === "email") return "someone@example.com";
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  return name.padEnd(min, "x");
}

function numberFor(schema: Schema): number {
  if (typeof schema.minimum === "number") return schema.minimum;
  if (typeof schema.exclusiveMinimum === "number") return schema.exclusiveMinimum + 1;
  if (typeof schema.maximum === "number") return Math.min(1, schema.maximum);
  return 1;
}

function objectFor(schema: Schema, depth: number): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  return Object.fromEntries(
    Object.entries(properties).map(([key, property]) => [key, valueFor(property, key, depth + 1)]),
  );
}

/** The arguments a call of a tool with `inputSchema` gets. */
export function argumentsFor(inputSchema: unknown): Record<string, unknown> {
  return objectFor((inputSchema ?? {}) as Schema, 0);
}
