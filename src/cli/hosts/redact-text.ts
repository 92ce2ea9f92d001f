/**
 * Secrets kept out of the diffs `mcpool wire` prints for Codex's TOML and Goose's YAML, as
 * `redact-json.ts` does for the JSON hosts: every value of an environment or
 * header map (`env`, `http_headers` in Codex; `envs`, `headers` in Goose) is shown as
 * `[redacted]`, the rest of the text byte for byte; a value made only of `${VAR}`
 * placeholders is shown.
 */
import { isMap, isPair, isScalar, parseDocument, visit } from "yaml";
import { REDACTED } from "../../pool/core/secrets.js";
import { placeholdersOnly } from "./redact-json.js";

/** Codex's maps whose values may be secrets (`env_http_headers` holds variable names). */
const TOML_SECRET_MAPS = new Set(["env", "http_headers"]);

/** Goose's maps whose values may be secrets. */
const YAML_SECRET_MAPS = new Set(["envs", "headers", "env"]);

/** A TOML string literal, basic or literal. */
const TOML_STRING = /"(?:[^"\\]|\\.)*"|'[^']*'/g;

const hide = (literal: string): string => {
  const value = literal.startsWith('"') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
  return placeholdersOnly(value) ? literal : JSON.stringify(REDACTED);
};

/**
 * `text` (TOML) with the values of `[….env]`/`[….http_headers]` tables and of inline
 * `env = { … }` / `http_headers = { … }` tables redacted. Line by line: a diff is lines.
 */
export function redactTomlSecrets(text: string): string {
  let inSecretTable = false;
  let inInline = false;
  return text
    .split("\n")
    .map((line) => {
      const header = /^\s*\[\[?\s*([^[\]]+?)\s*\]\]?/.exec(line);
      if (header) {
        const last = header[1]!
          .split(".")
          .at(-1)!
          .replace(/^["']|["']$/g, "");
        inSecretTable = TOML_SECRET_MAPS.has(last);
        return line;
      }
      const pair = /^(\s*[^=#]+?\s*=\s*)(.*)$/.exec(line);
      if (inSecretTable && pair) return pair[1] + pair[2]!.replace(TOML_STRING, hide);
      const key = pair?.[1]!.replace(/=\s*$/, "").trim();
      if (pair && key !== undefined && TOML_SECRET_MAPS.has(key) && pair[2]!.startsWith("{")) {
        inInline = !pair[2]!.includes("}");
        return pair[1] + pair[2]!.replace(TOML_STRING, hide);
      }
      if (inInline) {
        inInline = !line.includes("}");
        // `KEY = "value"` inside a multi-line inline table: only the values.
        return line.replace(
          /(=\s*)("(?:[^"\\]|\\.)*"|'[^']*')/g,
          (_m, eq: string, v: string) => eq + hide(v),
        );
      }
      return line;
    })
    .join("\n");
}

/** `text` (YAML) with every scalar value of an `envs`/`headers` map redacted, by its range. */
export function redactYamlSecrets(text: string): string {
  const document = parseDocument(text);
  if (document.errors.length > 0) return text;
  const ranges: [number, number][] = [];
  visit(document, {
    Pair(_key, pair) {
      if (!isScalar(pair.key) || !YAML_SECRET_MAPS.has(String(pair.key.value))) return;
      if (!isMap(pair.value)) return;
      for (const item of pair.value.items) {
        if (!isPair(item) || !isScalar(item.value) || item.value.range == null) continue;
        if (typeof item.value.value === "string" && placeholdersOnly(item.value.value)) continue;
        ranges.push([item.value.range[0], item.value.range[1]]);
      }
    },
  });
  ranges.sort((a, b) => a[0] - b[0]);
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of ranges) {
    parts.push(text.slice(from, start), JSON.stringify(REDACTED));
    from = end;
  }
  parts.push(text.slice(from));
  return parts.join("");
}
