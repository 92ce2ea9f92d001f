/**
 * A host profile: what the calling host declared that a pooled server can see —
 * sampling, elicitation (form, url), extensions (MCP Apps' `io.modelcontextprotocol/ui`, …)
 * and roots — and, when it declares roots, its roots. A
 * front (the bridge, the MCP sockets, the client library) sends one with each listing and
 * call; the pool serves it from a child of the server that declared exactly that. A caller
 * that sends none is served as the pool itself (the row's one shared child).
 *
 * Pure data and two functions both sides use: the profile of an MCP `initialize`'s client
 * capabilities, and the key two profiles are one child by.
 */

/** One root a host offers (MCP `roots/list`): a `file://` URI and an optional name. */
export interface HostRoot {
  uri: string;
  name?: string;
}

export interface HostProfile {
  /** The host answers `sampling/createMessage`. */
  sampling?: boolean;
  /** The elicitation modes the host answers; absent or empty: none. */
  elicitation?: readonly ("form" | "url")[];
  /**
   * The extensions the host declares (`capabilities.extensions`), each with its settings: a
   * server may offer other tools, or answer otherwise, to a host that renders MCP Apps.
   */
  extensions?: Readonly<Record<string, object>>;
  /** Present when the host declares roots: its roots (possibly none). */
  roots?: readonly HostRoot[];
  /**
   * `legacy`: the host speaks 2025-11-25 (an `initialize` session). A server that speaks both
   * eras, held by the pool in 2026-07-28, serves such a host from a child of its own in the
   * legacy era, as it serves the host direct. Absent: a modern host, or not said.
   */
  era?: "legacy";
}

/**
 * The most a profile's extensions may weigh, as canonical JSON (characters): a host that
 * declares more is served as one that declares none (the daemon refuses more on the wire).
 */
export const EXTENSIONS_MAX_CHARS = 4096;

/** The part of an MCP ClientCapabilities a profile reads; everything else is ignored. */
export interface DeclaredCapabilities {
  sampling?: unknown;
  elicitation?: unknown;
  roots?: unknown;
  extensions?: unknown;
}

/**
 * The profile of a host that declared `capabilities` and (when it declares roots) listed
 * `roots`. An `elicitation: {}` is form mode, as the MCP specification reads it.
 */
export function hostProfile(
  capabilities: DeclaredCapabilities | undefined,
  roots?: readonly HostRoot[],
): HostProfile {
  const profile: HostProfile = {};
  if (capabilities?.sampling !== undefined) profile.sampling = true;
  const elicitation = capabilities?.elicitation;
  if (elicitation !== undefined && elicitation !== null && typeof elicitation === "object") {
    const { form, url } = elicitation as { form?: unknown; url?: unknown };
    const modes: ("form" | "url")[] = [];
    if (form !== undefined || url === undefined) modes.push("form");
    if (url !== undefined) modes.push("url");
    profile.elicitation = modes;
  }
  const extensions = extensionsOf(capabilities?.extensions);
  if (extensions !== undefined) profile.extensions = extensions;
  if (capabilities?.roots !== undefined) {
    profile.roots = (roots ?? []).map((root) =>
      root.name === undefined ? { uri: root.uri } : { uri: root.uri, name: root.name },
    );
  }
  return profile;
}

/**
 * A declared `extensions` map as a profile keeps it: each extension whose settings are an
 * object, when they weigh at most EXTENSIONS_MAX_CHARS together; else undefined.
 */
function extensionsOf(declared: unknown): Record<string, object> | undefined {
  if (!isPlainObject(declared)) return undefined;
  const kept: Record<string, object> = {};
  for (const [name, settings] of Object.entries(declared)) {
    if (isPlainObject(settings)) kept[name] = settings;
  }
  if (Object.keys(kept).length === 0) return undefined;
  return canonicalJson(kept).length <= EXTENSIONS_MAX_CHARS ? kept : undefined;
}

/**
 * What the profile declares, as a stable string: `sampling`, `elicitation:form+url`,
 * `extensions:<canonical JSON>`, `roots`, joined by `,` (`none` for nothing). Two profiles
 * with one capability key look the same to a server until it asks for roots.
 */
export function capabilityKey(profile: HostProfile): string {
  const parts: string[] = [];
  if (profile.sampling === true) parts.push("sampling");
  const modes = [...new Set(profile.elicitation ?? [])].sort();
  if (modes.length > 0) parts.push(`elicitation:${modes.join("+")}`);
  const extensions = profile.extensions ?? {};
  if (Object.keys(extensions).length > 0) parts.push(`extensions:${canonicalJson(extensions)}`);
  if (profile.roots !== undefined) parts.push("roots");
  return parts.length === 0 ? "none" : parts.join(",");
}

/** The profile's roots as a stable string (sorted URIs), or undefined when it declares none. */
export function rootsKey(profile: HostProfile): string | undefined {
  if (profile.roots === undefined) return undefined;
  return JSON.stringify(
    profile.roots
      .map((root): [string, string | null] => [root.uri, root.name ?? null])
      .sort(compareEntries),
  );
}

/** capabilityKey and rootsKey together: two profiles with one key are served by one child. */
export function profileKey(profile: HostProfile): string {
  const roots = rootsKey(profile);
  return roots === undefined ? capabilityKey(profile) : `${capabilityKey(profile)} ${roots}`;
}

/**
 * What a resource subscription made for a host of `profile` is told apart by (its updates
 * come named by it): profileKey and its era; "" for a subscription that named no profile.
 */
export function subscriptionKey(profile: HostProfile | undefined): string {
  if (profile === undefined) return "";
  return profile.era === "legacy" ? `legacy ${profileKey(profile)}` : profileKey(profile);
}

/** Whether `value` has a profile's shape (the daemon's check of a wire field). */
export function isHostProfile(value: unknown): value is HostProfile {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { sampling, elicitation, extensions, roots, era } = value as Record<string, unknown>;
  if (sampling !== undefined && typeof sampling !== "boolean") return false;
  if (era !== undefined && era !== "legacy") return false;
  if (
    extensions !== undefined &&
    !(
      isPlainObject(extensions) &&
      Object.values(extensions).every(isPlainObject) &&
      canonicalJson(extensions).length <= EXTENSIONS_MAX_CHARS
    )
  ) {
    return false;
  }
  if (
    elicitation !== undefined &&
    !(Array.isArray(elicitation) && elicitation.every((m) => m === "form" || m === "url"))
  ) {
    return false;
  }
  if (roots === undefined) return true;
  return (
    Array.isArray(roots) &&
    roots.every(
      (root) =>
        typeof root === "object" &&
        root !== null &&
        typeof (root as HostRoot).uri === "string" &&
        ((root as HostRoot).name === undefined || typeof (root as HostRoot).name === "string"),
    )
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** JSON with every object's keys sorted: equal values, one string. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function compareEntries(a: [string, string | null], b: [string, string | null]): number {
  const left = JSON.stringify(a);
  const right = JSON.stringify(b);
  return left < right ? -1 : left > right ? 1 : 0;
}
