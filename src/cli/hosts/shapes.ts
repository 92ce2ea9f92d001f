/**
 * Every host's entry spelling, both ways, for `import` and `wire`: the first
 * twelve hosts' are entries.ts's; of the six beyond them, four spell an entry as one of those
 * does — Qwen Code as Gemini CLI (it is a fork), Kilo Code CLI 7 as OpenCode (a fork too),
 * Cline CLI as Cline's VS Code extension (one `@cline/core`), Augment's Auggie as the common
 * `mcpServers` shape — and two have a twist of their own, here:
 *
 * - GitHub Copilot CLI names a stdio server `"type": "local"` (or `"stdio"`), and lists the
 *   tools it may use in `"tools"` (docs.github.com, "Adding MCP servers for GitHub Copilot
 *   CLI"). A wired entry keeps the `"local"` it had.
 * - Continue CLI's `mcpServers` is a list of blocks, each with its `name`; a remote one keeps
 *   its headers in `requestOptions.headers` and may give an `apiKey` (sent as a bearer token),
 *   a `url` with no `type` is tried as Streamable HTTP first (`@continuedev/cli`
 *   src/services/MCPService.ts, mcpTransports.ts). `${{ secrets.X }}` and `uses:` Hub blocks
 *   are Continue's own: only Continue can resolve them.
 */
import type { HostName } from "./configs.js";
import { connectionKeys, toMcpBody, wiredEntry } from "./entries.js";

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The host among entries.ts's whose spelling `host`'s entries share. */
function spelledAs(host: HostName): HostName {
  switch (host) {
    case "qwen":
      return "gemini";
    case "kilo":
      return "opencode";
    case "cline-cli":
      return "cline";
    default:
      return host;
  }
}

/** Continue's keys of a remote block, beyond the common connection keys. */
const CONTINUE_CONNECTION = ["requestOptions", "apiKey"];

function continueBody(entry: Body): Body | { skip: string } {
  if (JSON.stringify(entry).includes("${{")) {
    return {
      skip: "it uses Continue's ${{ secrets.… }} or ${{ inputs.… }}, which only Continue resolves; add it to mcp.json by hand with ${VAR} or a value",
    };
  }
  if (entry.command === undefined && entry.url === undefined) {
    return { skip: "a Continue Hub block (`uses:`), which Continue fetches itself" };
  }
  const { name: _name, requestOptions, apiKey, ...rest } = entry;
  const headers: Body = {
    ...(isObject(requestOptions) && isObject(requestOptions.headers) ? requestOptions.headers : {}),
    ...(typeof apiKey === "string" ? { Authorization: `Bearer ${apiKey}` } : {}),
  };
  return toMcpBody("continue", Object.keys(headers).length > 0 ? { ...rest, headers } : rest);
}

/** A host's entry as an `mcp.json` body, or why it cannot be one. */
export function hostBody(host: HostName, entry: unknown): Body | { skip: string } {
  if (host === "continue" && isObject(entry)) return continueBody(entry);
  if (host === "copilot" && isObject(entry) && entry.type === "local") {
    return toMcpBody(host, { ...entry, type: "stdio" });
  }
  return toMcpBody(spelledAs(host), entry);
}

/** The keys that make up a connection in `host`'s spelling: a wired entry drops them all. */
export function hostConnectionKeys(host: HostName): ReadonlySet<string> {
  const keys = connectionKeys(spelledAs(host));
  return host === "continue" ? new Set([...keys, ...CONTINUE_CONNECTION]) : keys;
}

/** What `wiredEntry` takes after the entry and the host. */
type WiredRest =
  Parameters<typeof wiredEntry> extends [Body, HostName, ...infer Rest] ? Rest : never;

/** The entry a wired server gets in `host`'s spelling (entries.ts's `wiredEntry`). */
export function hostWiredEntry(original: Body, host: HostName, ...rest: WiredRest): Body {
  const entry = wiredEntry(original, spelledAs(host), ...rest);
  if (host === "copilot" && original.type === "local") entry.type = "local";
  if (host === "continue") for (const key of CONTINUE_CONNECTION) delete entry[key];
  return entry;
}
