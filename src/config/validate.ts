/**
 * Row validation: every problem with a row of any shape, as sentences a person
 * editing `mcp.json` or a form can act on. Empty means `sync()` can have the row; whether
 * the server answers is `probe()`'s question.
 *
 * Browser-safe: no `node:` imports, nothing from the SDK or the pool. Problems never quote
 * a value that may be a secret (env and header values, the url's credentials or query).
 */
import { validateSessionOptions } from "./conversation.js";
import { durationProblems, ROW_DURATIONS } from "./durations.js";
import { validateHooks } from "./hooks.js";
import { slugOf } from "./rows.js";
import { configuredUrlProblem } from "./url-policy.js";

export { isLoopbackHost } from "./url-policy.js";

/** Characters an id or slug may hold: it prefixes tool names, which allow only these. */
const NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

/**
 * Longest id or slug. Qualified names are capped at 64 characters (OpenAI's function-name
 * limit); a 32-character prefix plus `__` leaves 30 for the tool's own name before the
 * name is shortened to a hash.
 */
const MAX_NAME_LENGTH = 32;

const TRANSPORTS = ["stdio", "http"] as const;

const STDIO_FIELDS = ["command", "args", "env", "cwd"] as const;
const HTTP_FIELDS = ["url", "headers", "auth"] as const;

/** Options that are a whole number ≥ 0, or null/absent for "the pool's" (durations apart). */
const WHOLE_NUMBER_FIELDS = {
  maxResultChars: "characters",
  maxMemoryMb: "megabytes",
} as const;

/** A toolsFingerprint: SHA-256 in hex. */
const PIN_PATTERN = /^[0-9a-fA-F]{64}$/;

/** A row's `protocol`. */
const PROTOCOLS = ["auto", "legacy", "2026-07-28"] as const;

const BOOLEAN_FIELDS = ["enabled", "trustAnnotations", "coerceArguments", "lazy"] as const;

const STRING_LIST_FIELDS = ["hiddenTools", "alwaysLoad"] as const;

type Fields = Record<string, unknown>;

function isPlainObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a key is there at all; a key set to `undefined` is as good as absent. */
function has(row: Fields, key: string): boolean {
  return Object.hasOwn(row, key) && row[key] !== undefined;
}

/** What a value is, for a message: never the value itself. */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return "a boolean";
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}

/** A short rendering of a non-secret value, for a message. */
function show(value: unknown): string {
  if (typeof value === "string") {
    const cut = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return JSON.stringify(cut);
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return kindOf(value);
}

function checkName(field: "id" | "slug", value: string, problems: string[]): void {
  if (!NAME_PATTERN.test(value)) {
    problems.push(
      `\`${field}\` ${show(value)} may hold only letters, digits, \`_\` and \`-\`, because it namespaces tool names`,
    );
  }
  if (value.length > MAX_NAME_LENGTH) {
    problems.push(
      `\`${field}\` is ${value.length} characters long; at most ${MAX_NAME_LENGTH} are allowed, because it prefixes tool names capped at 64`,
    );
  }
  // `<slug>__<tool>` must say where the slug ends: with `__` inside a slug, or a
  // `_` at its end, server `a__b`'s `ping` and server `a`'s `b__ping` are one name.
  if (value.includes("__") || value.endsWith("_")) {
    problems.push(
      `\`${field}\` ${show(value)} may not hold \`__\` or end in \`_\`: \`__\` separates it from the tool's name, and another server's tools could take its names`,
    );
  }
}

/** A row refused because another row has its slug, and the row that keeps it. */
export interface SlugLoser {
  id: string;
  slug: string;
  keeper: string;
}

/**
 * The rows that lose their slug to another: of rows whose effective slugs (slug, else id)
 * are equal, one keeps it — the one in `serving`, so a new row never takes a running
 * server's tool names, else the first in order — and every other is refused.
 */
export function slugLosers(
  rows: readonly { id: string; slug?: string | undefined }[],
  serving: ReadonlySet<string> = new Set(),
): SlugLoser[] {
  const bySlug = new Map<string, string[]>();
  for (const row of rows) {
    const slug = slugOf(row);
    const ids = bySlug.get(slug);
    if (ids === undefined) bySlug.set(slug, [row.id]);
    else ids.push(row.id);
  }
  const losers: SlugLoser[] = [];
  for (const [slug, ids] of bySlug) {
    if (ids.length < 2) continue;
    const keeper = ids.find((id) => serving.has(id)) ?? (ids[0] as string);
    for (const id of ids) if (id !== keeper) losers.push({ id, slug, keeper });
  }
  return losers;
}

/** What a slug loser is told. */
export function slugLoserProblem(loser: SlugLoser): string {
  return `shares the slug \`${loser.slug}\` with \`${loser.keeper}\`, which keeps it; this row is left out, so its tools cannot take \`${loser.keeper}\`'s names`;
}

function checkId(row: Fields, problems: string[]): void {
  if (!has(row, "id")) {
    problems.push("`id` is missing; every row needs one");
    return;
  }
  const id = row.id;
  if (typeof id !== "string") {
    problems.push(`\`id\` must be a string, got ${kindOf(id)}`);
    return;
  }
  if (id === "") {
    problems.push("`id` must not be empty");
    return;
  }
  checkName("id", id, problems);
}

function checkSlug(row: Fields, problems: string[]): void {
  if (!has(row, "slug")) return;
  const slug = row.slug;
  if (typeof slug !== "string") {
    problems.push(`\`slug\` must be a string, got ${kindOf(slug)}`);
    return;
  }
  // An empty slug means "use the id", as slugOf reads it.
  if (slug !== "") checkName("slug", slug, problems);
}

function checkStringList(row: Fields, field: string, problems: string[], label = field): void {
  if (!has(row, field)) return;
  const value = row[field];
  if (!Array.isArray(value)) {
    problems.push(`\`${label}\` must be an array of strings, got ${kindOf(value)}`);
    return;
  }
  value.forEach((item: unknown, i) => {
    if (typeof item !== "string") {
      problems.push(`\`${label}[${i}]\` must be a string, got ${kindOf(item)}`);
    }
  });
}

/** A string→string map whose values may be secrets: report kinds, never values. */
function checkStringMap(row: Fields, field: "env" | "headers", problems: string[]): void {
  if (!has(row, field)) return;
  const value = row[field];
  if (!isPlainObject(value)) {
    problems.push(`\`${field}\` must be an object of string values, got ${kindOf(value)}`);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== "string") {
      problems.push(`\`${field}.${key}\` must be a string, got ${kindOf(item)}`);
    }
  }
}

function checkStdio(row: Fields, problems: string[]): void {
  if (!has(row, "command")) {
    problems.push("a stdio row needs a `command`");
  } else if (typeof row.command !== "string") {
    problems.push(`\`command\` must be a string, got ${kindOf(row.command)}`);
  } else if (row.command.trim() === "") {
    problems.push("`command` must not be empty");
  }
  checkStringList(row, "args", problems);
  checkStringMap(row, "env", problems);
  if (has(row, "cwd") && typeof row.cwd !== "string") {
    problems.push(`\`cwd\` must be a string, got ${kindOf(row.cwd)}`);
  }
  for (const field of HTTP_FIELDS) {
    if (has(row, field)) problems.push(`a stdio row carries no \`${field}\``);
  }
}

function checkUrl(row: Fields, problems: string[]): void {
  if (!has(row, "url")) {
    problems.push("an http row needs a `url`");
    return;
  }
  const url = row.url;
  if (typeof url !== "string") {
    problems.push(`\`url\` must be a string, got ${kindOf(url)}`);
    return;
  }
  if (url.trim() === "") {
    problems.push("`url` must not be empty");
    return;
  }
  // The remote URL policy; a placeholder host is held to it when the transport is built.
  const problem = configuredUrlProblem(url);
  if (problem !== undefined) problems.push(problem);
}

/** Fields an `auth` object may hold; its values are never quoted (the secrets are some). */
const AUTH_FIELDS = [
  "grant",
  "clientId",
  "clientSecret",
  "clientMetadataUrl",
  "privateKey",
  "privateKeyFile",
  "algorithm",
  "issuer",
  "idToken",
  "idpTokenEndpoint",
  "idpClientId",
  "idpClientSecret",
  "scopes",
] as const;
const AUTH_STRING_FIELDS = AUTH_FIELDS.filter((field) => field !== "grant" && field !== "scopes");
const GRANTS = ["authorization_code", "client_credentials", "id-jag"] as const;
/** The grants the daemon makes by itself, proving the client with a secret or a key. */
const MACHINE_GRANTS: readonly unknown[] = ["client_credentials", "id-jag"];
/** What only an `id-jag` row uses: the IdP's ID token and where to exchange it. */
const ID_JAG_FIELDS = ["idToken", "idpTokenEndpoint", "idpClientId", "idpClientSecret"];

function checkAuth(row: Fields, problems: string[]): void {
  if (!has(row, "auth")) return;
  const auth = row.auth;
  if (auth === "oauth") return;
  if (!isPlainObject(auth)) {
    problems.push(
      `\`auth\` must be "oauth" or an object with \`clientId\`, \`clientSecret\`, \`scopes\`; got ${kindOf(auth)}`,
    );
    return;
  }
  for (const key of Object.keys(auth)) {
    if (!(AUTH_FIELDS as readonly string[]).includes(key)) {
      problems.push(`\`auth.${key}\` is not an OAuth setting; use ${AUTH_FIELDS.join(", ")}`);
    }
  }
  for (const field of AUTH_STRING_FIELDS) {
    if (has(auth, field) && (typeof auth[field] !== "string" || auth[field] === "")) {
      problems.push(`\`auth.${field}\` must be a non-empty string, got ${kindOf(auth[field])}`);
    }
  }
  if (has(auth, "clientSecret") && !has(auth, "clientId")) {
    problems.push("`auth.clientSecret` needs the `auth.clientId` it belongs to");
  }
  checkStringList(auth, "scopes", problems, "auth.scopes");
  checkGrant(auth, problems);
  const metadataUrl = auth.clientMetadataUrl;
  if (typeof metadataUrl === "string" && !/^(https:\/\/|\$\{)/.test(metadataUrl)) {
    problems.push("`auth.clientMetadataUrl` must be an https URL (SEP-991 client id)");
  }
}

/** The grant and the credentials it needs: a machine grant needs exactly one way to prove itself. */
function checkGrant(auth: Fields, problems: string[]): void {
  const grant = auth.grant;
  if (grant !== undefined && !(GRANTS as readonly unknown[]).includes(grant)) {
    const got = typeof grant === "string" ? JSON.stringify(grant) : kindOf(grant);
    problems.push(`\`auth.grant\` must be one of ${GRANTS.join(", ")}; got ${got}`);
    return;
  }
  if (grant !== "id-jag") {
    for (const field of ID_JAG_FIELDS.filter((f) => has(auth, f))) {
      problems.push(`\`auth.${field}\` belongs to \`"grant": "id-jag"\``);
    }
  }
  const keys = ["privateKey", "privateKeyFile"].filter((field) => has(auth, field));
  if (!MACHINE_GRANTS.includes(grant)) {
    for (const field of [...keys, "algorithm"].filter((f) => has(auth, f))) {
      problems.push(
        `\`auth.${field}\` belongs to \`"grant": "client_credentials"\` or \`"id-jag"\``,
      );
    }
    return;
  }
  if (!has(auth, "clientId"))
    problems.push(`\`auth.grant\` ${String(grant)} needs \`auth.clientId\``);
  const proofs = keys.length + (has(auth, "clientSecret") ? 1 : 0);
  if (proofs !== 1) {
    problems.push(
      `\`auth.grant\` ${String(grant)} needs exactly one of \`auth.clientSecret\`, \`auth.privateKey\`, \`auth.privateKeyFile\``,
    );
  }
  if (has(auth, "algorithm") && keys.length === 0) {
    problems.push(
      "`auth.algorithm` signs with a private key: add `auth.privateKey` or `auth.privateKeyFile`",
    );
  }
  if (grant === "id-jag") checkIdJag(auth, problems);
}

/** An `id-jag` row's IdP side: the ID token, the endpoint that exchanges it, its client. */
function checkIdJag(auth: Fields, problems: string[]): void {
  for (const field of ["idToken", "idpTokenEndpoint"].filter((f) => !has(auth, f))) {
    problems.push(`\`auth.grant\` id-jag needs \`auth.${field}\``);
  }
  if (has(auth, "idpClientSecret") && !has(auth, "idpClientId")) {
    problems.push("`auth.idpClientSecret` needs the `auth.idpClientId` it belongs to");
  }
  const endpoint = auth.idpTokenEndpoint;
  const problem = typeof endpoint === "string" ? configuredUrlProblem(endpoint) : undefined;
  // The policy's message names `url`; this one is the IdP's endpoint.
  if (problem !== undefined) problems.push(problem.replace("`url`", "`auth.idpTokenEndpoint`"));
}

function checkHttp(row: Fields, problems: string[]): void {
  checkUrl(row, problems);
  checkStringMap(row, "headers", problems);
  checkAuth(row, problems);
  for (const field of STDIO_FIELDS) {
    if (has(row, field)) problems.push(`an http row carries no \`${field}\``);
  }
}

function checkTransport(row: Fields, problems: string[]): void {
  const allowed = TRANSPORTS.map((t) => `"${t}"`).join(" or ");
  if (!has(row, "transport")) {
    problems.push(`\`transport\` is missing; it must be ${allowed}`);
    return;
  }
  const transport = row.transport;
  if (transport === "stdio") return checkStdio(row, problems);
  if (transport === "http") return checkHttp(row, problems);
  if (typeof transport === "string" && transport.toLowerCase() === "sse") {
    problems.push(
      '`transport` "sse" is not supported: the pool speaks streamable HTTP; use "http" with the server\'s streamable HTTP endpoint',
    );
    return;
  }
  problems.push(`\`transport\` must be ${allowed}, got ${show(transport)}`);
}

function checkOptions(row: Fields, problems: string[]): void {
  if (has(row, "label") && typeof row.label !== "string") {
    problems.push(`\`label\` must be a string, got ${kindOf(row.label)}`);
  }
  for (const [field, unit] of Object.entries(WHOLE_NUMBER_FIELDS)) {
    const value = row[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      problems.push(
        `\`${field}\` must be a whole number of ${unit} ≥ 0, or null for the default; got ${show(value)}`,
      );
    }
  }
  problems.push(...durationProblems(ROW_DURATIONS, row));
  for (const field of BOOLEAN_FIELDS) {
    if (has(row, field) && typeof row[field] !== "boolean") {
      problems.push(`\`${field}\` must be true or false, got ${show(row[field])}`);
    }
  }
  for (const field of STRING_LIST_FIELDS) checkStringList(row, field, problems);
  if (has(row, "hooks")) problems.push(...validateHooks(row.hooks));
  problems.push(...validateSessionOptions(row));
  if (has(row, "protocol") && !(PROTOCOLS as readonly unknown[]).includes(row.protocol)) {
    problems.push(
      `\`protocol\` must be ${PROTOCOLS.map((p) => `"${p}"`).join(", ")}: "auto" finds the server's era, "legacy" pins initialize (2025-11-25 and earlier), "2026-07-28" pins the modern era; got ${show(row.protocol)}`,
    );
  }
  if (has(row, "pin") && (typeof row.pin !== "string" || !PIN_PATTERN.test(row.pin))) {
    problems.push(
      `\`pin\` must be a tool list's fingerprint, 64 hex characters as \`mcpool approve\` writes it; got ${show(row.pin)}`,
    );
  }
}

/**
 * Every problem with one row, of any shape — what a form holds is not yet a row. Each
 * problem is one sentence naming its field. Unknown keys are not problems (a newer
 * version's options pass through), except the other transport's fields.
 */
export function validateServerConfig(row: unknown): string[] {
  if (!isPlainObject(row)) {
    return [`a server row must be an object, got ${kindOf(row)}`];
  }
  const problems: string[] = [];
  checkId(row, problems);
  checkSlug(row, problems);
  checkTransport(row, problems);
  checkOptions(row, problems);
  return problems;
}

/** A row's id when it has a usable one. */
function idOf(row: unknown): string | undefined {
  return isPlainObject(row) && typeof row.id === "string" && row.id !== "" ? row.id : undefined;
}

/**
 * Every problem with a list of rows: each row's own, prefixed with `` `<id>`: `` (or
 * `row <index>:` for a row with no id), plus what only a list can show — a duplicate id,
 * and two rows whose effective slugs (slug, else id) would qualify tools alike.
 */
export function validateServers(rows: readonly unknown[]): string[] {
  const problems: string[] = [];
  const indexesById = new Map<string, number[]>();
  const idsBySlug = new Map<string, string[]>();

  rows.forEach((row, index) => {
    const id = idOf(row);
    const prefix = id === undefined ? `row ${index}:` : `\`${id}\`:`;
    for (const problem of validateServerConfig(row)) problems.push(`${prefix} ${problem}`);
    if (id === undefined) return;

    const indexes = indexesById.get(id);
    if (indexes === undefined) indexesById.set(id, [index]);
    else indexes.push(index);

    const slug = (row as Fields).slug;
    if (slug !== undefined && typeof slug !== "string") return; // already reported
    const effective = slugOf({ id, slug });
    const ids = idsBySlug.get(effective);
    if (ids === undefined) idsBySlug.set(effective, [id]);
    else if (!ids.includes(id)) ids.push(id);
  });

  for (const [id, indexes] of indexesById) {
    if (indexes.length > 1) {
      problems.push(`\`${id}\`: the id is used by more than one row (rows ${indexes.join(", ")})`);
    }
  }
  for (const [slug, ids] of idsBySlug) {
    if (ids.length > 1) {
      const [first, ...others] = [...ids].sort();
      for (const id of others) {
        problems.push(
          `\`${id}\`: shares the slug \`${slug}\` with \`${first}\`; their tool names would clash, and only \`${first}\` would keep them`,
        );
      }
    }
  }
  return problems;
}
