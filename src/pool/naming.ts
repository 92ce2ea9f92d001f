/**
 * Qualified tool names (SPEC C1): `<slug>__<tool>`, in the alphabet and length a model
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
  const hash = createHash("sha256").update(original, "utf8").digest("hex");
  return `${safe.slice(0, KEPT_LENGTH)}_${hash.slice(0, HASH_LENGTH)}`;
}
