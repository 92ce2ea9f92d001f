/**
 * The packages as a user gets them: `mcpool`, `mcpool-client` and
 * `mcpool-protocol` are packed from this checkout, `mcpool` is installed alone with
 * `npm install --global` into a temporary prefix (mcpool-client and mcpool-protocol
 * bundled inside), and `mcpool-client` alone into a temporary agent project (its
 * mcpool-protocol fetched from the registry, as if published beside it). All three are run
 * from there: the installed command, its daemon, and an agent importing each package.
 *
 * No network: dependencies come from a registry on 127.0.0.1 that serves the lockfile's
 * versions out of the npm cache `npm ci` filled (test/helpers/local-registry.ts says why
 * `--offline` alone cannot do this), and the protocol's tarball packed here. The checkout stays as it was: tarballs, the npm cache
 * of the installs and both installs live in one temporary directory. The perl relay is a file
 * of the package: the pack ships it beside the `dist/cli/bin.js` it finds from its own path
 * when it has to start the daemon (checked here, on the one pack the suite makes).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { RELAY_FILE } from "../../src/cli/hosts/pipe-entry.js";
import { startDaemon, testHome, type RunningDaemon, type TestHome } from "../helpers/daemon.js";
import {
  startLocalRegistry,
  type LocalRegistry,
  type PublishedTarball,
} from "../helpers/local-registry.js";
import { waitFor } from "../helpers/processes.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const VERSION = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }
).version;

/** Packing and installing ~100 packages on a loaded 2-core machine; far above what it takes. */
const NPM_TIMEOUT_MS = 150_000;
const SETUP_TIMEOUT_MS = 2 * NPM_TIMEOUT_MS + 30_000;
const COMMAND_TIMEOUT_MS = 30_000;

/** Lifecycle scripts npm would run when a package is installed (pack-time ones are fine). */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"];

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end without blocking this process (the registry answers from it),
 * killing it if it outlives `timeoutMs`.
 */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? COMMAND_TIMEOUT_MS);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What a user's shell would hand npm: no npm_* variables from the `npm test` that runs us. */
function shellEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.toLowerCase().startsWith("npm_")) env[name] = value;
  }
  // The installed `mcpool` starts with `#!/usr/bin/env node`: this node, whatever PATH says.
  env.PATH = [dirname(process.execPath), process.env.PATH ?? ""].join(delimiter);
  return env;
}

interface Packed {
  filename: string;
  files: { path: string }[];
  bundled: string[];
}

describe("the packed packages, installed as a user installs them", () => {
  let dir: string;
  let registry: LocalRegistry | undefined;
  let env: NodeJS.ProcessEnv;
  let mcpoolPack: Packed;
  let clientPack: Packed;
  let protocolPack: Packed;
  let prefix: string;
  let agent: string;
  let installs: { global: Ran; agent: Ran };
  let home: TestHome;
  let daemon: RunningDaemon | undefined;

  const bin = (): string => join(prefix, "bin", "mcpool");
  const installed = (...path: string[]): string =>
    join(prefix, "lib", "node_modules", "mcpool", ...path);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "mcpool-packaging-"));
    prefix = join(dir, "prefix");
    agent = join(dir, "agent");
    home = testHome("mcpool-packaging-home-");
    env = shellEnv();
    const cache = await run("npm", ["config", "get", "cache"], { cwd: ROOT, env: process.env });
    writeFileSync(join(dir, "npmrc"), "");
    const npm = (args: string[], cwd: string): Promise<Ran> =>
      run(
        "npm",
        [
          ...args,
          // Packing asks no registry; installing asks the one started once the packs exist.
          ...(registry === undefined ? [] : [`--registry=${registry.url}`]),
          `--cache=${join(dir, "npm-cache")}`,
          // Only these flags count: no ~/.npmrc pointing a scope at another registry.
          `--userconfig=${join(dir, "npmrc")}`,
          "--no-audit",
          "--no-fund",
          "--no-update-notifier",
        ],
        { cwd, env, timeoutMs: NPM_TIMEOUT_MS },
      );
    // --ignore-scripts: `npm test` built dist/ just now; the prepack build would rewrite it
    // under the other test files that run it.
    const pack = async (workspace: string[]): Promise<Packed> => {
      const packed = await npm(
        ["pack", ...workspace, "--ignore-scripts", "--json", `--pack-destination=${dir}`],
        ROOT,
      );
      if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
      return (JSON.parse(packed.stdout) as Packed[])[0] as Packed;
    };
    [mcpoolPack, clientPack, protocolPack] = await Promise.all([
      pack([]),
      pack(["--workspace=client"]),
      pack(["--workspace=protocol"]),
    ]);
    const protocolManifest = JSON.parse(
      readFileSync(join(ROOT, "protocol", "package.json"), "utf8"),
    ) as PublishedTarball["manifest"];
    registry = await startLocalRegistry(join(ROOT, "package-lock.json"), cache.stdout.trim(), [
      { path: join(dir, protocolPack.filename), manifest: protocolManifest },
    ]);

    mkdirSync(agent);
    writeFileSync(
      join(agent, "package.json"),
      JSON.stringify({ name: "an-agent", private: true, type: "module" }),
    );
    const [global, agentInstall] = await Promise.all([
      npm(["install", "--global", `--prefix=${prefix}`, join(dir, mcpoolPack.filename)], dir),
      npm(["install", join(dir, clientPack.filename)], agent),
    ]);
    installs = { global, agent: agentInstall };
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await daemon?.stop();
    await registry?.close();
    home?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("packs mcpool with mcpool-client's and mcpool-protocol's built files inside, and no install-time scripts", () => {
    const files = mcpoolPack.files.map((file) => file.path);
    expect(files).toContain("dist/cli/main.js");
    expect(files).toContain("systemd/mcpool.service");
    expect(files).toContain("launchd/dev.mcpool.daemon.plist");
    expect(files).toContain("node_modules/mcpool-client/dist/index.js");
    expect(files).toContain("node_modules/mcpool-protocol/dist/index.js");
    expect(mcpoolPack.bundled).toEqual(
      expect.arrayContaining(["mcpool-client", "mcpool-protocol"]),
    );
    expect(clientPack.files.map((file) => file.path)).toContain("dist/index.js");
    expect(protocolPack.files.map((file) => file.path)).toContain("dist/index.js");
  });

  it("ships the perl relay and the bin it execs, at the path it computes (`<relay>/../dist/cli/bin.js`)", () => {
    const files = mcpoolPack.files.map((file) => file.path);
    expect(relative(ROOT, RELAY_FILE)).toBe("relay/mcpool-pipe.pl");
    expect(files).toContain("relay/mcpool-pipe.pl");
    expect(files).toContain("dist/cli/bin.js");
  });

  it("installs mcpool alone from its tarball, with no registry copy of mcpool-client or mcpool-protocol", () => {
    const { code, stderr } = installs.global;
    const misses = registry?.misses.join(" ") ?? "";
    expect(code, `${stderr}\nnot in the lockfile or the cache: ${misses}`).toBe(0);
    expect(installs.global.stderr).not.toMatch(/install.scripts|allowScripts/i);
    const manifest = JSON.parse(readFileSync(installed("package.json"), "utf8")) as {
      scripts?: Record<string, string>;
      dependencies: Record<string, string>;
    };
    expect(INSTALL_SCRIPTS.filter((name) => manifest.scripts?.[name] !== undefined)).toEqual([]);
    expect(manifest.dependencies["mcpool-client"]).toBe(VERSION);
    expect(manifest.dependencies["mcpool-protocol"]).toBe(VERSION);
    expect(existsSync(installed("node_modules", "mcpool-client", "dist", "index.js"))).toBe(true);
    expect(existsSync(installed("node_modules", "mcpool-protocol", "dist", "index.js"))).toBe(true);
    // One copy of the contract, so the pool's errors are the client's class.
    expect(existsSync(installed("node_modules", "mcpool-client", "node_modules"))).toBe(false);
  });

  it("runs the installed command: --version and the in-process demo", async () => {
    const version = await run(bin(), ["--version"], { cwd: dir, env: home.env });
    expect(version, version.stderr).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    const demo = await run(bin(), ["demo"], { cwd: dir, env: home.env });
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/^server echo: ready, pid \d+, \d+ tools$/m);
    expect(demo.stdout).toContain('echo__add {"a":1,"b":2} → add({"a":1,"b":2})');
  });

  it("serves the daemon from the install to its CLI and to an agent importing all three packages", async () => {
    // The installed `mcpool` on the daemon's PATH, as a user's shell or service has it.
    home.env.PATH = [dirname(bin()), dirname(process.execPath), home.env.PATH ?? ""].join(
      delimiter,
    );
    daemon = await startDaemon(home, [], { bin: bin() });
    const call = await run(bin(), ["call", "echo__add", '{"a":2,"b":3}'], {
      cwd: dir,
      env: home.env,
    });
    expect(call.code, call.stderr).toBe(0);
    expect(call.stdout).toContain('add({"a":2,"b":3})');
    // The starter file runs the echo server through that command, not through paths into
    // this install, which a reinstall elsewhere would leave pointing at nothing.
    const starter = readFileSync(home.configPath, "utf8");
    expect(starter).toContain('"echo": {"command":"mcpool","args":["echo-server"],"label":"Echo"}');
    expect(starter).not.toContain(prefix);

    expect(installs.agent.code, installs.agent.stderr).toBe(0);
    writeFileSync(
      join(agent, "agent.js"),
      [
        'import { connect, McpPoolError } from "mcpool-client";',
        'import { McpPoolError as ProtocolError, METHODS } from "mcpool-protocol";',
        // The global install, as a script that embeds the pool would load it.
        "const mcpool = await import(process.argv[2]);",
        'const pool = await connect({ clientName: "an-agent" });',
        "const tools = (await pool.tools()).map((tool) => tool.function.name);",
        'const answer = await pool.call("echo__echo", { text: "from the agent" });',
        'const refused = await pool.call("nope__nothing").catch((error) => error);',
        "console.log(JSON.stringify({",
        "  tools, answer, code: refused.code, caught: refused instanceof ProtocolError,",
        "  oneClass: McpPoolError === ProtocolError, methods: Object.keys(METHODS),",
        "  poolCodes: mcpool.POOL_ERROR_CODES, pool: typeof mcpool.McpPool,",
        "}));",
        "await pool.close();",
      ].join("\n"),
    );
    const fromAgent = await run(
      process.execPath,
      ["agent.js", pathToFileURL(installed("dist", "index.js")).href],
      { cwd: agent, env: home.env },
    );
    expect(fromAgent.code, fromAgent.stderr).toBe(0);
    const seen = JSON.parse(fromAgent.stdout) as {
      tools: string[];
      answer: unknown;
      code: string;
      caught: boolean;
      oneClass: boolean;
      methods: string[];
      poolCodes: string[];
      pool: string;
    };
    expect(seen.tools).toContain("echo__echo");
    expect(JSON.stringify(seen.answer)).toContain("from the agent");
    // The refusal is rebuilt from the wire as the protocol's class, with a pool code.
    expect(seen).toMatchObject({ caught: true, oneClass: true });
    expect(seen.poolCodes).toContain(seen.code);
    expect(seen.methods).toContain("tools/call");
    expect(seen.pool).toBe("function");

    const shutdown = await run(bin(), ["shutdown"], { cwd: dir, env: home.env });
    expect(shutdown.code, shutdown.stderr).toBe(0);
    const serving = daemon.process;
    await waitFor(() => serving.exitCode !== null, COMMAND_TIMEOUT_MS, "the daemon to exit");
    expect(serving.exitCode).toBe(0);
  });
});
