/**
 * Secrets kept out of the diffs `mcpool import` and `mcpool wire` print: a diff
 * is read over a shoulder, pasted in an issue, kept in a terminal's scrollback. Every value
 * of an `env` or `headers` object, and an OAuth client secret or private key, is shown as
 * `[redacted]` on both sides, so the diff still shows which lines change. A value made of
 * placeholders (`${GITHUB_TOKEN}`, `Bearer ${SENTRY_TOKEN}`) is shown: it names variables,
 * and the value is filled in only where the daemon runs.
 */
import { parseTree, type Node } from "jsonc-parser";
import { REDACTED } from "../../pool/core/secrets.js";

/** Objects whose every value may be a secret. */
const SECRET_MAPS = new Set(["env", "headers"]);

/** Keys whose own value is a secret, wherever they are. */
const SECRET_KEYS = new Set(["clientSecret", "privateKey"]);

const PLACEHOLDER = /\$\{[^{}]+\}/g;

/** What may stand beside placeholders in a value still shown: an auth scheme, nothing else. */
const SHOWN_REMAINDER = /^(bearer|basic|token)?$/i;

/** Whether a value names variables only, and so holds no secret of its own. */
export function placeholdersOnly(value: string): boolean {
  const rest = value.replace(PLACEHOLDER, "");
  return rest !== value && SHOWN_REMAINDER.test(rest.trim());
}

/** The string nodes under `node` that hold secrets, given whether `node` is inside a secret map. */
function secretStrings(node: Node, inSecretMap: boolean, found: Node[]): void {
  if (node.type === "string") {
    if (inSecretMap && !placeholdersOnly(String(node.value))) found.push(node);
    return;
  }
  if (node.type === "property") {
    const [key, value] = node.children ?? [];
    if (!key || !value) return;
    const name = String(key.value);
    const secret = inSecretMap || SECRET_KEYS.has(name);
    secretStrings(value, secret || (SECRET_MAPS.has(name) && value.type === "object"), found);
    return;
  }
  for (const child of node.children ?? []) secretStrings(child, inSecretMap, found);
}

/**
 * `text` with every secret value replaced by `"[redacted]"`, the rest byte for byte. A text
 * that does not parse is returned whole: import and wire refuse such a file before a diff.
 */
export function redactJsonSecrets(text: string): string {
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  if (!tree) return text;
  const found: Node[] = [];
  secretStrings(tree, false, found);
  // One pass over the text, found in document order: ~/.claude.json runs to thousands of lines.
  const parts: string[] = [];
  let from = 0;
  for (const node of found) {
    parts.push(text.slice(from, node.offset), JSON.stringify(REDACTED));
    from = node.offset + node.length;
  }
  parts.push(text.slice(from));
  return parts.join("");
}
