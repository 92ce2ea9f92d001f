/**
 * Qualified tool names: `<slug>__<tool>`, in the alphabet and length a model
 * API accepts for a function name. Lookups are by the whole string, never by splitting it:
 * the split of a shortened name is a tool its server never had.
 */
import { createHash } from "node:crypto";

/** OpenAI's limit on a function name. */
const MAX_NAME_LENGTH = 64;

/** Hex digits of the hash that disambiguates a shortened name. */
const HASH_LENGTH = 6;

/** What a shortened name keeps: the rest is `_` and the hash. */
const KEPT_LENGTH = MAX_NAME_LENGTH - 1 - HASH_LENGTH;

/** Anything a function name may not hold, one code point at a time. */
const DISALLOWED = /[^A-Za-z0-9_-]/gu;

/**
 * The name a tool is offered and called by. Every character outside `[A-Za-z0-9_-]`
 * becomes `_` (MCP allows `fs.read`; OpenAI refuses the whole request over it). A name
 * then over 64 characters keeps its first 57 and adds `_` + 6 hex of a SHA-256 of the
 * original, unsubstituted `<slug>__<tool>`, so two long names sharing a prefix — or `a.b`
 * and `a_b` — stay apart. A name that already fits and qualifies is returned as it is.
 */
export function qualifiedName(slug: string, toolName: string): string {
  const original = `${slug}__${toolName}`;
  const safe = original.replace(DISALLOWED, "_");
  if (safe.length <= MAX_NAME_LENGTH) return safe;
  return hashedName(original);
}

/** `original` in the alphabet, cut to 57 characters, then `_` and 6 hex of its SHA-256. */
function hashedName(original: string): string {
  const safe = original.replace(DISALLOWED, "_");
  const hash = createHash("sha256").update(original, "utf8").digest("hex");
  return `${safe.slice(0, KEPT_LENGTH)}_${hash.slice(0, HASH_LENGTH)}`;
}

/**
 * The qualified names of one server's tools, in the server's order. Two tools whose names
 * map to one qualified name (`fs.read` and `fs_read`) both stay callable: the first keeps
 * it, and a later one takes the hashed form — the first 57 characters, `_` and 6 hex of a
 * SHA-256 of its original `<slug>__<tool>` — which is its own because the originals
 * differ. Only a name taken twice over (a tool listed twice under one name, or a hashed
 * form that is another tool's own name) leaves that tool undefined: it is left out.
 */
export function qualifiedNames(slug: string, toolNames: readonly string[]): (string | undefined)[] {
  const listed = new Set<string>();
  const taken = new Set<string>();
  return toolNames.map((toolName) => {
    const plain = qualifiedName(slug, toolName);
    const name = taken.has(plain) ? hashedName(`${slug}__${toolName}`) : plain;
    if (listed.has(toolName) || taken.has(name)) return undefined;
    listed.add(toolName);
    taken.add(name);
    return name;
  });
}
