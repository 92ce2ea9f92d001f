/**
 * The service's environment, not an agent's: an agent in its own process, whose
 * environment holds a secret of its own, auto-starts the daemon with `connect({ autoStart:
 * true })` exactly as the README shows it (no `autoStartCommand`). The servers of that daemon
 * never see the agent's secret; a variable from the daemon's env file reaches `${VAR}`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { stdioBridge } from "../helpers/bridge.js";
import { cliPath, runCli, testHome, type TestHome } from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const BOUND_MS = 20_000;

const clientUrl = pathToFileURL(
  createRequire(join(process.cwd(), "package.json")).resolve("mcpool-client"),
).href;

const homes: TestHome[] = [];
const spawned: ChildProcess[] = [];
/** Auto-started daemons: not our children, ended by pid and waited for. */
const daemons: number[] = [];

afterEach(async () => {
  for (const child of spawned.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const pid of daemons.splice(0)) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      continue; // gone
    }
    await waitFor(() => !alive(pid), BOUND_MS, `the auto-started daemon ${pid} to exit`).catch(() =>
      process.kill(pid, "SIGKILL"),
    );
  }
  for (const h of homes.splice(0)) h.remove();
});

/**
 * The README's agent: `connect({ clientName, autoStart: true })`, then the env server's
 * answer; `command`: an explicit `autoStartCommand` too.
 */
function agentScript(h: TestHome, command?: string[]): string {
  const path = join(h.dir, "agent.mjs");
  const extra = command === undefined ? "" : `, autoStartCommand: ${JSON.stringify(command)}`;
  writeFileSync(
    path,
    `import { writeFileSync } from "node:fs";
import { connect } from ${JSON.stringify(clientUrl)};
const pool = await connect({ clientName: "agent-a", autoStart: true${extra} });
const { pid } = await pool.status();
writeFileSync(${JSON.stringify(pidFile(h))}, String(pid));
const env = JSON.parse(await pool.call("env__env", {}));
process.stdout.write(JSON.stringify({ env }));
await pool.close();
`,
  );
  return path;
}

function runAgent(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [script], { env, stdio: ["ignore", "pipe", "pipe"] });
  spawned.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

/** Where the agent notes the auto-started daemon's pid, for the teardown to end it. */
const pidFile = (h: TestHome): string => join(h.dir, "daemon.pid");

function home(): TestHome {
  const h = testHome("mcpool-aenv-");
  homes.push(h);
  h.writeConfig({
    env: {
      command: process.execPath,
      args: [fixture("print-env.mjs")],
      env: { PLACED: "${FILE_SECRET}" },
    },
  });
  return h;
}

async function autoStartedEnv(h: TestHome, command?: string[]) {
  const agent = await runAgent(agentScript(h, command), { ...h.env, AGENT_A_SECRET: "canary" });
  if (existsSync(pidFile(h))) daemons.push(Number(readFileSync(pidFile(h), "utf8")));
  const answer = JSON.parse(agent.stdout || "{}") as { env?: Record<string, string> };
  return { ...agent, env: answer.env };
}

describe("an auto-started daemon's environment", () => {
  it("keeps the starting agent's own variables from every server, whatever command starts it", async () => {
    const h = home();
    const agent = await autoStartedEnv(h, [process.execPath, cliPath, "serve"]);

    expect(agent.stderr).toBe("");
    expect(agent.code).toBe(0);
    expect(agent.env?.AGENT_A_SECRET).toBeUndefined();
    expect(Object.values(agent.env ?? {})).not.toContain("canary");
    expect(agent.env?.HOME).toBe(h.env.HOME);
  });

  it("starts as the README shows it and hands the env file's variables to ${VAR}, never the agent's", async () => {
    const h = home();
    // The documented env file: <config dir>/mcpool/env, KEY=VALUE lines.
    const configDir = join(h.env.XDG_CONFIG_HOME!, "mcpool");
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(configDir, "env"), "# secrets for ${VAR}\nFILE_SECRET=from-the-file\n", {
      mode: 0o600,
    });

    const agent = await autoStartedEnv(h);

    expect(agent.stderr).toBe("");
    expect(agent.code).toBe(0);
    expect(agent.env?.PLACED).toBe("from-the-file");
    expect(Object.values(agent.env ?? {})).not.toContain("canary");
  });

  it("keeps a host's variables from every server when mcpool bridge auto-starts the daemon", async () => {
    const h = home();
    const bridge = await stdioBridge({ ...h, env: { ...h.env, AGENT_A_SECRET: "canary" } }, [
      "--server",
      "env",
    ]);
    let env: Record<string, string> | undefined;
    try {
      const status = JSON.parse(runCli(h, "status", "--json").stdout) as { pid?: number };
      if (status.pid !== undefined) daemons.push(status.pid);
      // The first listing waits for the new daemon's first reconcile.
      expect((await bridge.client.listTools()).tools.map((t) => t.name)).toContain("env");
      const result = await bridge.client.callTool({ name: "env", arguments: {} });
      const [first] = result.content as { type: string; text: string }[];
      env = JSON.parse(first!.text) as Record<string, string>;
    } finally {
      await bridge.close();
    }
    expect(env?.AGENT_A_SECRET).toBeUndefined();
    expect(Object.values(env ?? {})).not.toContain("canary");
    expect(env?.HOME).toBe(h.env.HOME);
  });
});
