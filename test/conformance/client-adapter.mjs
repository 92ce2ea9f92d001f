#!/usr/bin/env node
/**
 * The client under test for the official MCP conformance client scenarios
 * (`@modelcontextprotocol/conformance client --command "node …/client-adapter.mjs"`): an
 * McpPool from the built dist/ is the MCP client of the one url the runner appends, for the
 * scenario named in MCP_CONFORMANCE_SCENARIO (its data in MCP_CONFORMANCE_CONTEXT).
 *
 * The pool does the protocol: initialize, tools/list, tools/call, SSE resumption,
 * elicitation, and OAuth through the SDK with the provider handed to it (`authProvider`).
 * The adapter plays the person and the browser: its provider completes the mock
 * authorization server's redirect headlessly (a fetch of the authorization URL with
 * `redirect: "manual"`, the code read from the Location header), exchanges the code the
 * way the SDK's finishAuth() does, and redials; at most MAX_AUTHORIZATIONS times, as the
 * scenarios expect of a client that must not loop on a scope it will never get.
 *
 * Exit code 0 when the scenario's client work succeeded, 1 otherwise (some scenarios expect
 * the client to give up).
 */
/* global fetch, URL, URLSearchParams */
import { randomUUID } from "node:crypto";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  ClientCredentialsProvider,
  PrivateKeyJwtProvider,
} from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { McpPool } from "../../dist/index.js";

/** Authorization requests one run may make: the first, and two step-ups or retries. */
const MAX_AUTHORIZATIONS = 3;
/** The client id URL offered where the authorization server takes metadata documents (SEP-991). */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";
/** Named in the authorization request; nothing listens there, the code is read from the redirect. */
const REDIRECT_URL = "http://localhost:3000/callback";
const ID = "conf";

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");

/** The authorization-code client, with the browser played by a fetch. In memory, per run. */
class HeadlessProvider {
  authorizations = 0;
  /** The code of the last redirect, until it is exchanged. */
  pendingCode = undefined;
  #state = undefined;
  #client;
  #tokens;
  #verifier;
  #discovery;

  constructor(preRegistered) {
    this.#client = preRegistered;
  }

  get redirectUrl() {
    return REDIRECT_URL;
  }

  clientMetadataUrl = CLIENT_METADATA_URL;

  get clientMetadata() {
    return {
      client_name: "mcpool-conformance",
      redirect_uris: [REDIRECT_URL],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    };
  }

  state() {
    this.#state = randomUUID();
    return this.#state;
  }

  clientInformation() {
    return this.#client;
  }

  saveClientInformation(client) {
    this.#client = client;
  }

  tokens() {
    return this.#tokens;
  }

  saveTokens(tokens) {
    this.#tokens = tokens;
  }

  saveCodeVerifier(verifier) {
    this.#verifier = verifier;
  }

  codeVerifier() {
    return this.#verifier;
  }

  saveDiscoveryState(state) {
    this.#discovery = state;
  }

  discoveryState() {
    return this.#discovery;
  }

  async redirectToAuthorization(authorizationUrl) {
    if (this.authorizations >= MAX_AUTHORIZATIONS) {
      throw new Error(`gave up after ${MAX_AUTHORIZATIONS} authorization requests`);
    }
    this.authorizations += 1;
    // A step-up keeps what was granted: the host asks for the challenged scope together with
    // the scope it holds (as `mcpool login` does), or the next request is refused for the first.
    const granted = this.#tokens?.scope?.split(" ") ?? [];
    const asked = authorizationUrl.searchParams.get("scope")?.split(" ") ?? [];
    if (granted.length > 0 && asked.length > 0) {
      authorizationUrl.searchParams.set("scope", [...new Set([...granted, ...asked])].join(" "));
    }
    const response = await fetch(authorizationUrl, { redirect: "manual" });
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (!location) throw new Error(`the authorization endpoint answered ${response.status}`);
    const back = new URL(location);
    if (back.searchParams.get("state") !== this.#state)
      throw new Error("the state came back changed");
    const error = back.searchParams.get("error");
    if (error) throw new Error(`the authorization server refused: ${error}`);
    this.pendingCode = back.searchParams.get("code") ?? undefined;
  }

  /** Exchanges the pending code as finishAuth() would; false when there is none. */
  async finish() {
    const code = this.pendingCode;
    this.pendingCode = undefined;
    if (!code) return false;
    return (await auth(this, { serverUrl: url, authorizationCode: code })) === "AUTHORIZED";
  }
}

/**
 * SEP-990, enterprise-managed authorization: the IdP's ID token exchanged at the IdP for an
 * ID-JAG (RFC 8693), then the ID-JAG for an access token at the authorization server with
 * the jwt-bearer grant (RFC 7523), the client authenticating with client_secret_basic.
 */
class CrossAppAccessProvider {
  #tokens;
  #discovery;

  get redirectUrl() {
    return undefined;
  }

  get clientMetadata() {
    return {
      client_name: "mcpool-conformance",
      redirect_uris: [],
      grant_types: ["urn:ietf:params:oauth:grant-type:jwt-bearer"],
      token_endpoint_auth_method: "client_secret_basic",
    };
  }

  clientInformation() {
    return { client_id: context.client_id, client_secret: context.client_secret };
  }

  tokens() {
    return this.#tokens;
  }

  saveTokens(tokens) {
    this.#tokens = tokens;
  }

  redirectToAuthorization() {
    throw new Error("enterprise-managed authorization has no browser step");
  }

  saveCodeVerifier() {}

  codeVerifier() {
    throw new Error("no PKCE in a jwt-bearer grant");
  }

  saveDiscoveryState(state) {
    this.#discovery = state;
  }

  async prepareTokenRequest() {
    const resource = this.#discovery?.resourceMetadata?.resource ?? url;
    const audience =
      this.#discovery?.authorizationServerMetadata?.issuer ??
      this.#discovery?.authorizationServerUrl;
    const response = await fetch(context.idp_token_endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
        requested_token_type: "urn:ietf:params:oauth:token-type:id-jag",
        audience,
        resource,
        subject_token: context.idp_id_token,
        subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
        client_id: context.idp_client_id,
      }),
    });
    if (!response.ok) throw new Error(`the IdP refused the token exchange: ${response.status}`);
    const { access_token: idJag } = await response.json();
    return new URLSearchParams({
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion: idJag,
    });
  }
}

function providerFor(name) {
  switch (name) {
    case "auth/client-credentials-jwt":
      return new PrivateKeyJwtProvider({
        clientId: context.client_id,
        privateKey: context.private_key_pem,
        algorithm: context.signing_algorithm ?? "ES256",
      });
    case "auth/client-credentials-basic":
      return new ClientCredentialsProvider({
        clientId: context.client_id,
        clientSecret: context.client_secret,
      });
    case "auth/cross-app-access-complete-flow":
    case "auth/enterprise-managed-authorization":
      return new CrossAppAccessProvider();
    case "auth/pre-registration":
      return new HeadlessProvider({
        client_id: context.client_id,
        client_secret: context.client_secret,
        redirect_uris: [REDIRECT_URL],
      });
    default:
      return name.startsWith("auth/") ? new HeadlessProvider(undefined) : undefined;
  }
}

const provider = providerFor(scenario);

const pool = new McpPool({
  clientName: "mcpool-conformance",
  log: { error: (message) => process.stderr.write(`${message}\n`) },
  // Generous: the runner starts all 26 scenarios at once, and two cores go round slowly.
  connectTimeoutMs: 60_000,
  callTimeoutMs: 60_000,
  // A failed dial is retried by this adapter after an authorization, never held back.
  crashBackoffMs: 1,
  ...(provider ? { authProvider: () => provider } : {}),
  // The person asked accepts the form without touching it: the fields they left alone take
  // the schema's defaults, which the pool fills in (SEP-1034).
  onElicit: () => ({ action: "accept", content: {} }),
});

/** Another authorization is worth a retry when the last one left a code to exchange. */
async function reauthorized(error) {
  return (
    error?.code === "auth-required" &&
    typeof provider?.finish === "function" &&
    (await provider.finish())
  );
}

async function connect() {
  await pool.sync([{ id: ID, transport: "http", url, ...(provider ? { auth: "oauth" } : {}) }]);
  for (;;) {
    const [state] = pool.state();
    if (state.status === "ready") return;
    if (!(await reauthorized({ code: state.status }))) {
      throw new Error(`could not connect (${state.status}): ${state.error ?? "no error"}`);
    }
    await pool.reconnect(ID).catch(() => undefined);
  }
}

async function call(tool, args = {}) {
  for (;;) {
    try {
      return await pool.call(`${ID}__${tool}`, args);
    } catch (error) {
      if (!(await reauthorized(error))) throw error;
    }
  }
}

/** Every tool the pool offers, called with a string for each required property. */
async function callEveryTool() {
  for (const tool of pool.tools()) {
    const name = tool.function.name.slice(`${ID}__`.length);
    const required = tool.function.parameters?.required ?? [];
    await call(name, Object.fromEntries(required.map((key) => [key, "us-west1"])));
  }
}

const work = {
  initialize: async () => {},
  // The calls the scenario names, with its arguments (SEP-2243's Mcp-Param-* headers).
  "http-custom-headers": async () => {
    for (const { name, arguments: args } of context.toolCalls ?? []) await call(name, args);
  },
  "http-invalid-tool-headers": callEveryTool,
  // Two input_required round trips (one with requestState, one without), a call beside them
  // that must carry neither, and a result with no resultType (SEP-2322).
  "sep-2322-client-request-state": async () => {
    await Promise.all([call("test_mrtr_echo_state"), call("test_mrtr_unrelated")]);
    await call("test_mrtr_no_state");
    await call("test_mrtr_no_result_type");
  },
  tools_call: () => call("add_numbers", { a: 5, b: 3 }),
  "elicitation-sep1034-client-defaults": () => call("test_client_elicitation_defaults"),
  "sse-retry": () => call("test_reconnection"),
};

try {
  await connect();
  if (work[scenario]) await work[scenario]();
  else if (pool.tools().some((t) => t.function.name === `${ID}__test-tool`))
    await call("test-tool");
  process.exitCode = 0;
} catch (error) {
  process.stderr.write(`client-adapter (${scenario}): ${error?.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  await pool.close();
}
