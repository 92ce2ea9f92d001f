/**
 * A real host's own roots through the pool (a
 * roots-declaring client sees its own root): Claude Code, installed pinned from npm
 * (test/helpers/real-hosts.ts), declares roots — its working directory — and server-filesystem
 * takes a client's roots as its allowed directories. Wired with `mcpool wire claude-code
 * --write`, `claude -p` in two projects calls server-filesystem's list_allowed_directories
 * through the user's daemon, with a stand-in for the model's API
 * (test/fixtures/real-hosts/fake-anthropic.mjs) asking for exactly that call: each project
 * sees its own directory, never the other's and never the row's, as it does direct — also
 * with 12 sessions in two projects started at once beside a CPU load.
 * Opt-in: MCPOOL_REAL_HOSTS=1 or CI=true.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REAL_HOSTS_CLI, HOST_MS } from "../helpers/real-hosts-cli.js";
import {
  binIn,
  INSTALL_MS,
  installed,
  killGroup,
  REAL_HOSTS,
  REAL_HOSTS_OFF,
  realWorld,
  serversReady,
  type RealWorld,
} from "../helpers/real-hosts.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const TOOL = "mcp__filesystem__list_allowed_directories";

describe.runIf(REAL_HOSTS)(
  `Claude Code's own roots through the pool${REAL_HOSTS ? "" : ` (${REAL_HOSTS_OFF})`}`,
  () => {
    let prefix: string;
    let world: RealWorld;
    let api: ChildProcess;
    let apiUrl = "";
    const claude = REAL_HOSTS_CLI.find((host) => host.wire === "claude-code")!;

    beforeAll(async () => {
      prefix = await installed("hosts");
      world = realWorld();
      api = spawn(process.execPath, [fixture("real-hosts/fake-anthropic.mjs")], {
        env: { ...process.env, FAKE_TOOL: TOOL },
        stdio: ["pipe", "pipe", "inherit"],
      });
      let out = "";
      api.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
      await waitFor(() => /listening \S+/.test(out), 15_000, "the stand-in API to listen");
      apiUrl = /listening (\S+)/.exec(out)![1] as string;
    }, INSTALL_MS + 30_000);

    afterAll(async () => {
      const pid = api?.pid;
      api?.kill("SIGTERM");
      if (pid !== undefined) await waitFor(() => !alive(pid), 10_000, "the stand-in API to exit");
      await world?.stopDaemons();
      await world?.remove();
    });

    /** `claude -p` in `cwd`, as the user runs it: the answer the stand-in API echoed back. */
    const ask = (cwd: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const child = spawn(
          binIn(prefix, "claude"),
          [
            "-p",
            "which directories may you read?",
            "--allowedTools",
            TOOL,
            "--output-format",
            "json",
          ],
          {
            cwd,
            env: {
              ...world.login,
              ANTHROPIC_API_KEY: "sk-stand-in",
              ANTHROPIC_BASE_URL: apiUrl,
              // Every MCP tool offered in the first turn, not behind a tool search.
              ENABLE_TOOL_SEARCH: "false",
              // The first turn waits for the MCP servers (by default `-p` does not: under
              // load its first turn goes out with no MCP tool, answered `no tool`).
              MCP_CONNECTION_NONBLOCKING: "false",
              // ...for at most 5 s unless told otherwise: beside the CPU load, twelve sessions'
              // servers took longer, and one's first turn went out without the tool.
              CLAUDE_CODE_MCP_STARTUP_WAIT_MS: "60000",
            },
            stdio: ["ignore", "pipe", "pipe"],
            detached: true,
          },
        );
        let out = "";
        child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
        child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()));
        const timer = setTimeout(() => killGroup(child), HOST_MS);
        child.once("error", reject);
        child.once("exit", (code) => {
          clearTimeout(timer);
          killGroup(child);
          const line = out.split("\n").find((l) => l.startsWith("{") && l.includes('"result"'));
          if (code !== 0 || line === undefined)
            reject(new Error(`claude -p ended ${code}:\n${out}`));
          else resolve((JSON.parse(line) as { result: string }).result);
        });
      });

    it(
      "gives each project its own directory, as Claude Code gets it direct, not the row's",
      async () => {
        const projects = ["alpha", "beta"].map((name) => {
          const dir = join(world.home, "work", name);
          mkdirSync(dir, { recursive: true });
          return realpathSync(dir);
        });
        claude.configure(world);
        // The user's daemon comes up while Claude Code runs direct (its file names no daemon).
        const [direct] = await Promise.all([
          ask(projects[0]!),
          world.serve().then(() => serversReady(world)),
        ]);
        expect(direct).toContain(projects[0]);

        const wired = await world.cli(["wire", "claude-code", "--write"]);
        expect(wired.code, wired.stdout).toBe(0);
        const [alpha, beta] = [await ask(projects[0]!), await ask(projects[1]!)];
        expect(alpha).toMatch(/^RESULT: /);
        expect(alpha).toContain(projects[0]);
        expect(alpha).not.toContain(projects[1]);
        expect(alpha).not.toContain(world.project);
        expect(beta).toContain(projects[1]);
        expect(beta).not.toContain(projects[0]);
        // Through the user's daemon: a child of server-filesystem per project.
        const status = (await world.status()) as unknown as {
          servers: { id: string; profiles?: { roots?: string[] }[] }[];
        };
        const roots = (status.servers.find((s) => s.id === "filesystem")?.profiles ?? []).flatMap(
          (child) => child.roots ?? [],
        );
        for (const project of projects) expect(roots).toContain(pathToFileURL(project).href);
      },
      4 * HOST_MS,
    );

    it(
      "gives 12 sessions in two projects started at once beside a CPU load each its own directory",
      async () => {
        const projects = ["gamma", "delta"].map((name) => {
          const dir = join(world.home, "work", name);
          mkdirSync(dir, { recursive: true });
          return realpathSync(dir);
        });
        // A fresh daemon: no child of server-filesystem yet, nothing learnt about it.
        await world.stopDaemons();
        claude.configure(world);
        await world.serve();
        await serversReady(world);
        const wired = await world.cli(["wire", "claude-code", "--write"]);
        expect(wired.code, wired.stdout).toBe(0);
        const sessions = Array.from({ length: 12 }, (_, i) => projects[i % 2] as string);
        // Beside a CPU load: two processes that keep both cores busy while the sessions run.
        const burners = [0, 1].map(() =>
          spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }),
        );
        const answers = await Promise.all(sessions.map((cwd) => ask(cwd))).finally(async () => {
          for (const burner of burners) burner.kill("SIGKILL");
          for (const burner of burners) {
            const pid = burner.pid;
            if (pid !== undefined) await waitFor(() => !alive(pid), 15_000, "a burner to exit");
          }
        });
        const wrong = answers.filter((answer, i) => {
          const own = sessions[i] as string;
          const other = sessions[i + 1 - 2 * (i % 2)] as string;
          return !answer.includes(own) || answer.includes(other) || answer.includes(world.project);
        });
        expect(wrong).toEqual([]);
      },
      6 * HOST_MS,
    );
  },
);
