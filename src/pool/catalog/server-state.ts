/**
 * One server as state() reports it: a copy of its row (secrets only when asked
 * for), what the pool made of it, and what the server said for itself. Pure: it reads the
 * entry and the index and builds plain data the daemon can send as it is.
 */
import { labelOf, slugOf, withoutSecrets } from "../../config/rows.js";
import { qualifiedName } from "./naming.js";
import type { ServerEntry } from "../server/entry.js";
import { toolNamesOf, type ToolIndex } from "./tool-index.js";
import type { PinDiff, ServerState } from "../core/types.js";

export interface ServerStateExtras {
  /** Put env, headers and auth secrets back into `config`. */
  secrets: boolean;
  /** What changed since the pin, when the server is withheld and it is known. */
  pinDiff: PinDiff | undefined;
  /** Counts of a conversation row's clients. */
  conversations: ServerState["conversations"];
  /** What a sign-in should ask for, when the server refused one. */
  signIn?: ServerState["signIn"];
  /** What was unusual about the server's sign-in, when something was. */
  signInNotice?: string | undefined;
  /** The row's children for other host profiles, when it has any up. */
  profiles?: ServerState["profiles"];
  /** What the server declares to its legacy hosts, when a child in that era serves them. */
  legacyFace?: ServerState["legacyFace"];
}

export function serverState(
  entry: ServerEntry,
  index: ToolIndex,
  extras: ServerStateExtras,
): ServerState {
  const { row, connection, id } = entry;
  const hidden = new Set(row.hiddenTools ?? []);
  const lost = index.lostTo.has(id);
  const slug = slugOf(row);
  const names = toolNamesOf(entry);
  const state: ServerState = {
    id,
    slug,
    label: labelOf(row),
    config: structuredClone(extras.secrets ? row : withoutSecrets(row)),
    status: index.pinMismatch.has(id) ? "pin-mismatch" : entry.status,
    tools: entry.tools.map((tool, at) => {
      // A tool left out by naming (listed twice) still shows, under its plain name.
      const qualified = names[at] ?? qualifiedName(slug, tool.name);
      const indexed = index.byName.get(qualified);
      return {
        name: tool.name,
        qualified,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.title !== undefined ? { title: tool.title } : {}),
        ...(tool.annotations !== undefined ? { annotations: { ...tool.annotations } } : {}),
        hidden: hidden.has(tool.name),
        ...(lost ? { clashed: true } : {}),
        ...(indexed?.entry === entry ? { tokens: indexed.tokens } : {}),
      };
    }),
  };
  if (entry.error !== undefined) state.error = entry.error;
  else if (lost) {
    // Ready, yet none of its tools is offered: say so where status shows what is wrong.
    state.error = `its tools are left out: server "${index.lostTo.get(id)}" has a tool name one of them needs`;
  }
  if (entry.status === "auth-required" && extras.signIn) state.signIn = extras.signIn;
  if (extras.signInNotice !== undefined) state.signInNotice = extras.signInNotice;
  if (entry.retryAt !== undefined) state.retryAt = entry.retryAt;
  const since = entry.startingSince;
  if (since !== undefined) {
    state.startingSince = since;
    const pid = entry.startingPid;
    if (pid !== undefined) state.pid = pid;
  }
  if (connection) {
    if (connection.pid !== undefined) state.pid = connection.pid;
    state.startedAt = connection.startedAt;
    if (connection.inflight > 0) state.inflight = connection.inflight;
    if (connection.instructions !== undefined) state.instructions = connection.instructions;
    if (connection.capabilities !== undefined)
      state.capabilities = structuredClone(connection.capabilities);
    if (connection.serverInfo !== undefined)
      state.serverInfo = structuredClone(connection.serverInfo) as NonNullable<
        ServerState["serverInfo"]
      >;
  }
  const era = connection?.era ?? entry.verdict?.era;
  if (era !== undefined) state.era = era;
  if (connection?.protocolVersion !== undefined) state.protocolVersion = connection.protocolVersion;
  if (entry.fingerprint !== undefined) state.toolsFingerprint = entry.fingerprint;
  const { cacheScope: scope, toolsExpireAt: expiresAt, toolsTtlMs: ttlMs } = entry;
  if (scope !== undefined || expiresAt !== undefined || ttlMs !== undefined) {
    state.toolsCache = {
      ...(scope !== undefined ? { scope } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(ttlMs !== undefined ? { ttlMs } : {}),
    };
  }
  if (extras.pinDiff) state.pinDiff = structuredClone(extras.pinDiff);
  if (entry.stale) state.stale = true;
  if (extras.conversations) state.conversations = extras.conversations;
  if (extras.profiles) state.profiles = extras.profiles;
  if (extras.legacyFace) state.legacyFace = extras.legacyFace;
  return state;
}
