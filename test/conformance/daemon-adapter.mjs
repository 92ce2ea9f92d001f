#!/usr/bin/env node
/**
 * The client under test for the official MCP conformance client auth scenarios, as users
 * sign in: `@modelcontextprotocol/conformance client --command "node …/daemon-adapter.mjs"`.
 * For the url the runner appends, it writes an mcp.json in a fresh temp home, starts a real
 * `mcpool serve` from dist/, and then behaves as a person at a terminal would:
 *
 *   - while the daemon says the server is `auth-required`, runs `mcpool login conf
 *     --no-browser` and plays the browser only: fetches the printed URL with
 *     `redirect: "manual"` and follows the Location to login's loopback listener;
 *   - once the server is ready, an agent (mcpool-client) calls its tool through the daemon;
 *     a call refused with `auth-required` (a step-up) sends the person back to login.
 *
 * Everything OAuth is mcpool's: discovery, registration, scope choice, step-up, the bound
 * on sign-ins, machine grants (`"grant": "client_credentials"` rows, with the secret or key
 * file given as `${VAR}`; `"grant": "id-jag"` rows, with the IdP's ID token as `${VAR}`). The person gives up after USER_PATIENCE rounds, or when login
 * says mcpool stopped asking. Exit 0 when the tool was called, 1 otherwise.
 */
/* global fetch, URL */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect } from "mcpool-client";

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const ID = "conf";
/** The client id URL the scenario expects a SEP-991 client to offer. */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";
/** Rounds of "look at the status, log in or call" a patient person makes. */
const USER_PATIENCE = 6;
/** Bound on the daemon's start, on one login, and on the server settling, ms. */
const STEP_BOUND_MS = 60_000;
/** Bound on the daemon's exit after SIGTERM, ms, before SIGKILL. */
const STOP_BOUND_MS = 10_000;

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");

const home = mkdtempSync(join(tmpdir(), "mcpool-conf-"));
const env = {
  ...process.env,
  HOME: home,
  XDG_RUNTIME_DIR: join(home, "run-xdg"),
  XDG_CONFIG_HOME: join(home, "config-xdg"),
  XDG_DATA_HOME: join(home, "data"),
  XDG_STATE_HOME: join(home, "state"),
  XDG_CACHE_HOME: join(home, "cache"),
  MCPOOL_SOCKET: join(home, "run", "mcpool.sock"),
  MCPOOL_CONFIG: join(home, "config", "mcp.json"),
};
const children = new Set();

function say(line) {
  process.stderr.write(`daemon-adapter (${scenario}): ${line}\n`);
}

/** The row a user writes for this scenario: the url, and what the server's docs ask for. */
function row() {
  const base = { type: "http", url };
  switch (scenario) {
    case "auth/pre-registration":
      env.CONF_CLIENT_SECRET = context.client_secret;
      return {
        ...base,
        auth: { clientId: context.client_id, clientSecret: "${CONF_CLIENT_SECRET}" },
      };
    case "auth/basic-cimd":
      // The URL of the client's metadata document: its client id where the server takes those.
      return { ...base, auth: { clientMetadataUrl: CLIENT_METADATA_URL } };
    case "auth/client-credentials-basic":
      env.CONF_CLIENT_SECRET = context.client_secret;
      return {
        ...base,
        auth: {
          grant: "client_credentials",
          clientId: context.client_id,
          clientSecret: "${CONF_CLIENT_SECRET}",
        },
      };
    case "auth/client-credentials-jwt": {
      const keyFile = join(home, "client-key.pem");
      writeFileSync(keyFile, context.private_key_pem, { mode: 0o600 });
      env.CONF_KEY_FILE = keyFile;
      return {
        ...base,
        auth: {
          grant: "client_credentials",
          clientId: context.client_id,
          privateKeyFile: "${CONF_KEY_FILE}",
          ...(context.signing_algorithm ? { algorithm: context.signing_algorithm } : {}),
        },
      };
    }
    case "auth/cross-app-access-complete-flow":
    case "auth/enterprise-managed-authorization":
      // SEP-990: what an enterprise hands its service, the ID token in the environment.
      env.CONF_CLIENT_SECRET = context.client_secret;
      env.CONF_ID_TOKEN = context.idp_id_token;
      return {
        ...base,
        auth: {
          grant: "id-jag",
          clientId: context.client_id,
          clientSecret: "${CONF_CLIENT_SECRET}",
          idToken: "${CONF_ID_TOKEN}",
          idpTokenEndpoint: context.idp_token_endpoint,
          idpClientId: context.idp_client_id,
        },
      };
    default:
      // Servers of the 2025-03-26 spec publish no resource metadata: the daemon's message
      // for them says to set "auth": "oauth", and so does this person.
      return scenario.startsWith("auth/2025-03-26-") ? { ...base, auth: "oauth" } : base;
  }
}

function spawnCli(args) {
  const child = spawn(process.execPath, [CLI, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

async function startDaemon() {
  const daemon = spawnCli(["serve"]);
  let log = "";
  daemon.stdout.resume();
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the daemon did not serve")), STEP_BOUND_MS);
    daemon.stderr.on("data", (chunk) => {
      log += chunk.toString();
      if (log.includes("serving ")) {
        clearTimeout(timer);
        resolve();
      }
    });
    daemon.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the daemon exited with ${code}: ${log}`));
    });
  });
  return { process: daemon, log: () => log };
}

async function stopDaemon(daemon) {
  if (daemon.exitCode !== null || daemon.signalCode !== null) return;
  const exited = new Promise((resolve) => daemon.once("exit", resolve));
  daemon.kill("SIGTERM");
  const timer = setTimeout(() => daemon.kill("SIGKILL"), STOP_BOUND_MS);
  await exited;
  clearTimeout(timer);
}

/** The browser: the authorization URL, then the redirect back to login's listener. */
async function browse(authorizationUrl) {
  const response = await fetch(authorizationUrl, { redirect: "manual" });
  await response.body?.cancel();
  const location = response.headers.get("location");
  if (!location) throw new Error(`the authorization endpoint answered ${response.status}`);
  const back = await fetch(new URL(location, authorizationUrl));
  await back.body?.cancel();
}

/** `mcpool login conf --no-browser`, the printed URL opened by browse(). */
async function login() {
  const child = spawnCli(["login", ID, "--no-browser"]);
  let stdout = "";
  let stderr = "";
  let browsing;
  child.stdout.on("data", (chunk) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk) => {
    stderr += chunk.toString();
    const found = /open this URL in a browser:\s+(\S+)/.exec(stderr);
    if (found && !browsing) browsing = browse(found[1]);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), STEP_BOUND_MS);
  const code = await new Promise((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  await browsing?.catch((error) => say(`the browser failed: ${error.message}`));
  say(`login exited ${code}: ${stdout.trim()} ${stderr.trim()}`);
  return { code, opened: browsing !== undefined };
}

/** The server's state once its dial has settled. */
async function settled(agent) {
  const deadline = Date.now() + STEP_BOUND_MS;
  for (;;) {
    const state = (await agent.state()).find((s) => s.id === ID);
    if (state && state.status !== "connecting" && state.status !== "idle") return state;
    if (Date.now() > deadline) throw new Error(`"${ID}" is still ${state?.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * What the person came for, through the daemon: the scenario's own tool where it names one
 * (the elicitation accepted untouched, so the fields left alone take the schema's defaults,
 * which the daemon fills in: SEP-1034), else the server's test tool or its first.
 */
async function work(agent, state) {
  const answer = { onElicit: () => ({ action: "accept", content: {} }) };
  const call = (name, args = {}) => agent.call(`${ID}__${name}`, args, answer);
  // 2026-07-28: the calls a scenario names with its arguments (SEP-2243's Mcp-Param-*
  // headers), every tool offered (a tool with broken x-mcp-header marks is not), and
  // input_required round trips with a call beside them that carries neither (SEP-2322).
  if (scenario === "http-custom-headers") {
    for (const { name, arguments: args } of context.toolCalls ?? []) await call(name, args);
    return;
  }
  if (scenario === "http-invalid-tool-headers") {
    for (const { function: tool } of await agent.tools({ servers: [ID] })) {
      const required = tool.parameters?.required ?? [];
      const args = Object.fromEntries(required.map((key) => [key, "us-west1"]));
      await agent.call(tool.name, args, answer);
    }
    return;
  }
  if (scenario === "sep-2322-client-request-state") {
    await Promise.all([call("test_mrtr_echo_state"), call("test_mrtr_unrelated")]);
    await call("test_mrtr_no_state");
    await call("test_mrtr_no_result_type");
    return;
  }
  if (scenario === "json-schema-ref-no-deref") return;
  const named = {
    tools_call: ["add_numbers", { a: 5, b: 3 }],
    "elicitation-sep1034-client-defaults": ["test_client_elicitation_defaults", {}],
    "sse-retry": ["test_reconnection", {}],
  }[scenario];
  const tool = named
    ? state.tools.find((t) => t.name === named[0])
    : (state.tools.find((t) => t.name === "test-tool") ?? state.tools[0]);
  if (!tool) {
    if (named) throw new Error(`"${ID}" offers no tool ${named[0]}`);
    return;
  }
  await agent.call(tool.qualified, named?.[1] ?? {}, {
    onElicit: () => ({ action: "accept", content: {} }),
  });
}

async function run() {
  mkdirSync(join(home, "config"), { recursive: true });
  writeFileSync(env.MCPOOL_CONFIG, JSON.stringify({ mcpServers: { [ID]: row() } }, null, 2));
  const daemon = await startDaemon();
  const agent = await connect({ socketPath: env.MCPOOL_SOCKET, clientName: "conformance" });
  try {
    for (let round = 0; round < USER_PATIENCE; round += 1) {
      const state = await settled(agent);
      if (state.status === "auth-required") {
        say(`the daemon says: ${state.error}`);
        const signedIn = await login();
        // Login started no sign-in and failed: mcpool stopped asking; so does the person.
        if (signedIn.code !== 0 && !signedIn.opened) return 1;
        continue;
      }
      if (state.status !== "ready") throw new Error(`"${ID}" is ${state.status}: ${state.error}`);
      try {
        await work(agent, state);
        return 0;
      } catch (error) {
        if (error?.code !== "auth-required") throw error;
        say(`the call was refused: ${error.message}`);
      }
    }
    say(`gave up after ${USER_PATIENCE} rounds`);
    return 1;
  } finally {
    await agent.close();
    await stopDaemon(daemon.process);
    say(`daemon log:\n${daemon.log()}`);
  }
}

process.once("SIGTERM", () => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(home, { recursive: true, force: true });
  process.exit(1);
});

try {
  process.exitCode = await run();
} catch (error) {
  say(error?.stack ?? String(error));
  process.exitCode = 1;
} finally {
  for (const child of children) child.kill("SIGKILL");
  rmSync(home, { recursive: true, force: true });
}
