/**
 * `mcpool wire <host>` on real files in a temp HOME: the built CLI, each host's own location
 * and format, comments kept, a dry run that changes nothing, a backup on --write.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse } from "jsonc-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { binPath } from "../helpers/bridge.js";
import { cliPath, testHome, type TestHome } from "../helpers/daemon.js";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function mcpool(home: TestHome, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env: home.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mcpool ${args.join(" ")} did not finish within 20 s`));
    }, 20_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const FILES = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"];

describe("mcpool wire", () => {
  let home: TestHome;
  let bridgeArgs: (id: string) => string[];

  beforeEach(() => {
    home = testHome("mcpool-wire-");
    home.writeConfig({
      files: { command: "npx", args: FILES },
      memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] },
      remote: { type: "http", url: "https://mcp.example.com/mcp" },
      off: { command: "off-server", disabled: true },
    });
    // The `mcpool` executable: its bridge is the lean one.
    bridgeArgs = (id) => [binPath, "bridge", "--server", id, "--socket", home.socketPath];
  });

  afterEach(() => home.remove());

  it("shows a diff and writes nothing without --write", async () => {
    const path = join(home.dir, ".cursor", "mcp.json");
    const original = `{
  // the servers Cursor starts
  "mcpServers": {
    "files": { "command": "npx", "args": ${JSON.stringify(FILES)} },
    "other": { "command": "other-server" } // not pooled
  }
}
`;
    write(path, original);
    const run = await mcpool(home, ["wire", "cursor"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("files → mcpool bridge --server files");
    expect(run.stdout).toContain("left as they are");
    expect(run.stdout).toContain(`--- ${path}`);
    expect(run.stdout).toMatch(/^-\s+"files": \{ "command": "npx"/m);
    expect(run.stdout).toContain("dry run: nothing was written");
    expect(readFileSync(path, "utf8")).toBe(original);
    expect(readdirSync(dirname(path))).toEqual(["mcp.json"]);
  });

  it("shows env and header values as [redacted] in its diff", async () => {
    const env = { DATABASE_URL: "postgres://ada:hunter2-secret@db/x", HOME_DIR: "${HOME}" };
    home.writeConfig({ db: { command: "db-mcp", env } });
    const path = join(home.dir, ".cursor", "mcp.json");
    const body = JSON.stringify({ command: "db-mcp", env });
    write(path, `{\n  "mcpServers": {\n    "db": ${body}\n  }\n}\n`);
    const run = await mcpool(home, ["wire", "cursor"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("db → mcpool bridge --server db");
    expect(run.stdout).toMatch(
      /^-\s+"db": .*"DATABASE_URL":"\[redacted\]","HOME_DIR":"\$\{HOME\}"/m,
    );
    expect(run.stdout).not.toContain("hunter2");
  });

  it("rewrites matching entries with --write, keeping comments, other keys and a backup", async () => {
    const path = join(home.dir, ".cursor", "mcp.json");
    const original = `{
  // the servers Cursor starts
  "mcpServers": {
    "files": {
      "command": "npx",
      "args": ${JSON.stringify(FILES)},
      "autoApprove": ["read_file"]
    },
    "other": { "command": "other-server" } // not pooled
  }
}
`;
    write(path, original);
    const run = await mcpool(home, ["wire", "cursor", "--write"]);
    expect(run.code, run.stderr).toBe(0);
    const text = readFileSync(path, "utf8");
    expect(text).toContain("// the servers Cursor starts");
    expect(text).toContain("// not pooled");
    const config = parse(text) as { mcpServers: Record<string, unknown> };
    expect(config.mcpServers.files).toEqual({
      command: process.execPath,
      args: bridgeArgs("files"),
      autoApprove: ["read_file"],
    });
    expect(config.mcpServers.other).toEqual({ command: "other-server" });
    const backups = readdirSync(dirname(path)).filter((f) =>
      f.startsWith("mcp.json.mcpool-backup-"),
    );
    expect(backups).toHaveLength(1);
    // The scheme `import` uses too (hosts/backup.ts): one name for a backup mcpool made.
    expect(backups[0]).toMatch(/^mcp\.json\.mcpool-backup-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ$/);
    expect(readFileSync(join(dirname(path), backups[0] as string), "utf8")).toBe(original);
    expect(run.stdout).toContain(`backup at ${join(dirname(path), backups[0] as string)}`);

    const again = await mcpool(home, ["wire", "cursor", "--write"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("files: already goes through mcpool");
    expect(again.stdout).toContain("nothing to wire");
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("prints the diff it wrote with --write, then the backup's path", async () => {
    const path = join(home.dir, ".gemini", "settings.json");
    write(path, JSON.stringify({ mcpServers: { files: { command: "npx", args: FILES } } }));
    const run = await mcpool(home, ["wire", "gemini", "--write"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`--- ${path}\n+++ ${path} (wired)\n`);
    expect(run.stdout).toMatch(/^-\{"mcpServers":\{"files":\{"command":"npx"/m);
    expect(run.stdout).toContain(
      `+{"mcpServers":{"files":{"command":${JSON.stringify(process.execPath)}`,
    );
    const backup = readdirSync(dirname(path)).find((f) => f.includes(".mcpool-backup-"));
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
      `wrote ${path} (backup at ${join(dirname(path), backup!)})`,
    );
    expect(run.stdout).not.toContain("dry run");
  });

  it("answers `wire HOST --help` with wire's own help and where that host's file is", async () => {
    for (const args of [
      ["wire", "qwen", "--help"],
      ["wire", "copilot", "--write", "-h"],
    ]) {
      const run = await mcpool(home, args);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^usage: mcpool wire HOST /);
      expect(run.stdout).toContain("qwen, copilot, kilo, continue, cline-cli, augment");
      expect(run.stdout).not.toContain("usage: mcpool <command>");
    }
    const qwen = await mcpool(home, ["wire", "qwen", "--help"]);
    expect(qwen.stdout).toContain(
      `qwen keeps its MCP servers in (wire edits the first that exists):\n  ${join(home.dir, ".qwen", "settings.json")}`,
    );
    const kilo = await mcpool(home, ["wire", "kilo", "--help"]);
    expect(kilo.stdout).toContain(join(home.env.XDG_CONFIG_HOME as string, "kilo", "kilo.jsonc"));
  });

  it("uses VS Code's servers key and names the transport", async () => {
    const path = join(home.env.XDG_CONFIG_HOME as string, "Code", "User", "mcp.json");
    write(
      path,
      JSON.stringify(
        {
          servers: {
            remote: { type: "http", url: "https://mcp.example.com/mcp" },
            memory: {
              type: "stdio",
              command: "npx",
              args: ["-y", "@modelcontextprotocol/server-memory"],
            },
          },
          inputs: [],
        },
        null,
        "\t",
      ),
    );
    const run = await mcpool(home, ["wire", "vscode", "--write"]);
    expect(run.code, run.stderr).toBe(0);
    const text = readFileSync(path, "utf8");
    expect(text).toContain('\n\t"servers"');
    const config = parse(text) as { servers: Record<string, unknown>; inputs: unknown[] };
    expect(config.servers.remote).toEqual({
      type: "stdio",
      command: process.execPath,
      args: bridgeArgs("remote"),
    });
    expect(config.servers.memory).toEqual({
      type: "stdio",
      command: process.execPath,
      args: bridgeArgs("memory"),
    });
    expect(config.inputs).toEqual([]);
  });

  it("wires Claude Code's user and project servers, and Claude Desktop's", async () => {
    const claudeCode = join(home.dir, ".claude.json");
    write(
      claudeCode,
      JSON.stringify(
        {
          numStartups: 3,
          mcpServers: { files: { type: "stdio", command: "npx", args: FILES, env: {} } },
          projects: {
            "/work/app": {
              mcpServers: {
                mem: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] },
              },
            },
          },
        },
        null,
        2,
      ),
    );
    const code = await mcpool(home, ["wire", "claude-code", "--write"]);
    expect(code.code, code.stderr).toBe(0);
    expect(code.stdout).toContain("mem (project /work/app) → mcpool bridge --server memory");
    const wired = parse(readFileSync(claudeCode, "utf8")) as {
      numStartups: number;
      mcpServers: Record<string, unknown>;
      projects: Record<string, { mcpServers: Record<string, unknown> }>;
    };
    expect(wired.numStartups).toBe(3);
    expect(wired.mcpServers.files).toEqual({
      type: "stdio",
      command: process.execPath,
      args: bridgeArgs("files"),
    });
    expect(wired.projects["/work/app"]?.mcpServers.mem).toEqual({
      command: process.execPath,
      args: bridgeArgs("memory"),
    });

    const desktop = join(
      home.env.XDG_CONFIG_HOME as string,
      "Claude",
      "claude_desktop_config.json",
    );
    write(desktop, JSON.stringify({ mcpServers: { filesystem: { command: "npx", args: FILES } } }));
    const run = await mcpool(home, ["wire", "claude-desktop"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("filesystem → mcpool bridge --server files");
  });

  it("refuses an unknown host and says when the host has no config", async () => {
    const unknown = await mcpool(home, ["wire", "emacs"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("claude-desktop, claude-code, cursor, vscode");
    const missing = await mcpool(home, ["wire", "cursor"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(join(home.dir, ".cursor", "mcp.json"));
    expect(existsSync(join(home.dir, ".cursor"))).toBe(false);
  });
});
