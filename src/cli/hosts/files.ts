/**
 * A host's file read in its own format — JSON with comments, Codex's TOML (smol-toml),
 * Goose's YAML (yaml) — and the server entries in it, each with the key path that holds it,
 * so `import` and `wire` walk every host the same way.
 */
import { readFile } from "node:fs/promises";
import { parseTree, getNodeValue, printParseErrorCode, type ParseError } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { parseDocument } from "yaml";
import {
  hostFormat,
  serverMapPaths,
  type HostFormat,
  type HostName,
  type JsonPath,
} from "./configs.js";

/** One server entry of a host's file. */
export interface HostEntry {
  /** The key the host gives it. */
  name: string;
  /** Its key path in the file: the map's path, then `name` (a list's: the item's index). */
  path: JsonPath;
  /** The project of `~/.claude.json` whose map holds it, if it is a project's. */
  project?: string;
  /** The entry as the host wrote it. */
  value: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function positionOf(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/** The value of `text` in `format`, or where and why it does not parse. */
export function parseHostText(
  format: HostFormat,
  text: string,
): { value: unknown } | { error: string } {
  if (format === "toml") {
    try {
      return { value: parseToml(text) };
    } catch (error) {
      // smol-toml's message already says the line and column, then quotes the line.
      return { error: (error as Error).message.split("\n")[0]! };
    }
  }
  if (format === "yaml") {
    const document = parseDocument(text);
    const first = document.errors[0];
    if (first) return { error: first.message.split("\n")[0]! };
    return { value: document.toJS() as unknown };
  }
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first)
    return { error: `${printParseErrorCode(first.error)} at ${positionOf(text, first.offset)}` };
  if (tree === undefined) return { error: "empty file" };
  return { value: getNodeValue(tree) as unknown };
}

export async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Every entry of the maps at `maps` (default: the host's own) in a parsed file, in order. */
export function hostEntries(
  host: HostName,
  root: unknown,
  maps: JsonPath[] = serverMapPaths(host, root),
): HostEntry[] {
  const entries: HostEntry[] = [];
  for (const mapPath of maps) {
    let map: unknown = root;
    for (const key of mapPath) map = isObject(map) ? map[key as string] : undefined;
    if (Array.isArray(map)) {
      // Continue's `mcpServers` is a list of blocks, each named by its `name`.
      for (const [index, value] of map.entries()) {
        const name = isObject(value) && typeof value.name === "string" ? value.name : `#${index}`;
        entries.push({ name, path: [...mapPath, index], value });
      }
      continue;
    }
    if (!isObject(map)) continue;
    const project =
      mapPath[0] === "projects" && mapPath.length > 2 ? String(mapPath[1]) : undefined;
    for (const [name, value] of Object.entries(map)) {
      entries.push({
        name,
        path: [...mapPath, name],
        ...(project !== undefined ? { project } : {}),
        value,
      });
    }
  }
  return entries;
}

/** A host's file: missing (undefined), unreadable (`error`), or its text and entries. */
export async function readHostFile(
  host: HostName,
  path: string,
  maps?: (root: unknown) => JsonPath[],
): Promise<{ text: string; entries: HostEntry[] } | { error: string } | undefined> {
  let text: string | undefined;
  try {
    text = await readIfThere(path);
  } catch (error) {
    return { error: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  }
  if (text === undefined) return undefined;
  const parsed = parseHostText(hostFormat(host), text);
  if ("error" in parsed) return parsed;
  return { text, entries: hostEntries(host, parsed.value, maps?.(parsed.value)) };
}

/** `value` as JSON with every object's keys sorted: two values the same whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}
