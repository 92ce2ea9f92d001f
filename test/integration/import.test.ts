/**
 * `mcpool import` over real files in a temp HOME, each written the way its host
 * writes it: Claude Desktop's plain JSON, Claude Code's ~/.claude.json with per-project
 * servers and a project .mcp.json, Cursor's ~/.cursor/mcp.json, VS Code's tab-indented
 * JSONC mcp.json and settings.json. Placeholders must come through verbatim, comments in
 * mcpool's own file must survive, duplicates merge silently and clashes stay out.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseMcpJson } from "../../src/config/index.js";
import { backupPath } from "../../src/cli/hosts/backup.js";
import { idFor, planImport, writeImport, type ImportWhere } from "../../src/cli/hosts/import.js";
import { unifiedDiff } from "../../src/cli/hosts/unified-diff.js";
import { cliPath } from "../helpers/daemon.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

interface Machine {
  home: string;
  project: string;
  target: string;
  where: ImportWhere;
}

/** A temp HOME on Linux with every host's file in place, and mcpool's own mcp.json. */
function linuxMachine(): Machine {
  const home = mkdtempSync(join(tmpdir(), "mcpool-import-"));
  dirs.push(home);
  const project = join(home, "src", "webapp");
  mkdirSync(project, { recursive: true });
  write(
    join(home, ".config", "Claude", "claude_desktop_config.json"),
    JSON.stringify(
      {
        mcpServers: {
          filesystem: {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada/Documents"],
          },
          github: {
            command: "docker",
            args: [
              "run",
              "-i",
              "--rm",
              "-e",
              "GITHUB_PERSONAL_ACCESS_TOKEN",
              "ghcr.io/github/github-mcp-server",
            ],
            env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}" },
          },
        },
        globalShortcut: "Alt+Space",
      },
      null,
      2,
    ),
  );
  write(
    join(home, ".claude.json"),
    JSON.stringify(
      {
        numStartups: 42,
        mcpServers: {
          memory: {
            type: "stdio",
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-memory"],
            env: { MEMORY_FILE_PATH: "${HOME}/.cache/memory.json" },
          },
        },
        projects: {
          [project]: {
            allowedTools: [],
            mcpServers: {
              sentry: {
                type: "http",
                url: "https://mcp.sentry.dev/mcp",
                headers: { Authorization: "Bearer ${SENTRY_TOKEN}" },
              },
            },
          },
        },
      },
      null,
      2,
    ),
  );
  write(
    join(project, ".mcp.json"),
    JSON.stringify(
      {
        mcpServers: {
          api: {
            type: "http",
            url: "${API_BASE_URL:-https://api.example.com}/mcp",
            headers: { "X-Api-Key": "${API_KEY}" },
          },
          asana: { type: "sse", url: "https://mcp.asana.com/sse" },
        },
      },
      null,
      2,
    ),
  );
  write(
    join(home, ".cursor", "mcp.json"),
    JSON.stringify(
      {
        mcpServers: {
          // The same github server as Claude Desktop's: merged silently.
          github: {
            command: "docker",
            args: [
              "run",
              "-i",
              "--rm",
              "-e",
              "GITHUB_PERSONAL_ACCESS_TOKEN",
              "ghcr.io/github/github-mcp-server",
            ],
            env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}" },
          },
          // Another filesystem: a clash with Claude Desktop's.
          filesystem: {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada/code"],
          },
          "brave search": {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-brave-search"],
            env: { BRAVE_API_KEY: "${env:BRAVE_API_KEY}" },
          },
          insecure: { url: "http://mcp.example.com/mcp" },
        },
      },
      null,
      2,
    ),
  );
  write(
    join(home, ".config", "Code", "User", "mcp.json"),
    [
      "{",
      "\t// Inputs are prompted for on first start.",
      '\t"inputs": [{ "type": "promptString", "id": "perplexity-key", "password": true }],',
      '\t"servers": {',
      '\t\t"playwright": { "type": "stdio", "command": "npx", "args": ["@playwright/mcp@latest"], },',
      '\t\t"perplexity": {',
      '\t\t\t"type": "stdio",',
      '\t\t\t"command": "npx",',
      '\t\t\t"args": ["-y", "server-perplexity-ask"],',
      '\t\t\t"env": { "PERPLEXITY_API_KEY": "${input:perplexity-key}" },',
      "\t\t},",
      "\t},",
      "}",
      "",
    ].join("\n"),
  );
  write(
    join(home, ".config", "Code", "User", "settings.json"),
    [
      "{",
      '\t"editor.fontSize": 14, // big enough',
      '\t"mcp": {',
      '\t\t"servers": {',
      '\t\t\t"time": { "command": "uvx", "args": ["mcp-server-time", "--local-timezone=${TZ:-UTC}"] },',
      "\t\t},",
      "\t},",
      "}",
      "",
    ].join("\n"),
  );
  const target = join(home, ".config", "mcpool", "mcp.json");
  write(
    target,
    [
      "// mcpool's servers. Comments like this one must survive an import.",
      "{",
      '  "mcpool": { "callTimeoutMs": 30000 },',
      '  "mcpServers": {',
      "    // The demo server.",
      '    "echo": { "command": "node", "args": ["/opt/mcpool/echo.mjs"] },',
      "    // Already here, and the same as Claude Code's.",
      '    "memory": {',
      '      "command": "npx",',
      '      "args": ["-y", "@modelcontextprotocol/server-memory"],',
      '      "env": { "MEMORY_FILE_PATH": "${HOME}/.cache/memory.json" }',
      "    },",
      "    // Already here, and not the same as VS Code's.",
      '    "playwright": { "command": "npx", "args": ["@playwright/mcp@0.0.30"] }',
      "  }",
      "}",
      "",
    ].join("\n"),
  );
  return { home, project, target, where: { home, cwd: project, platform: "linux", env: {} } };
}

describe("mcpool import", () => {
  it("plans the merge of every host's servers: added, merged, clashing, skipped, renamed", async () => {
    const machine = linuxMachine();
    const before = readFileSync(machine.target, "utf8");
    const plan = await planImport({ target: machine.target, where: machine.where });

    const counts = plan.files.map((f) => [
      f.host,
      f.file.slice(machine.home.length),
      f.servers.length + f.skipped.length,
    ]);
    expect(counts).toEqual([
      ["claude-desktop", "/.config/Claude/claude_desktop_config.json", 2],
      ["claude-code", "/.claude.json", 2],
      ["claude-code", "/src/webapp/.mcp.json", 2],
      ["cursor", "/.cursor/mcp.json", 4],
      ["vscode", "/.config/Code/User/mcp.json", 2],
      ["vscode", "/.config/Code/User/settings.json", 1],
    ]);
    expect(plan.added.map((a) => a.id)).toEqual([
      "github",
      "sentry",
      "api",
      "brave-search",
      "perplexity",
      "time",
    ]);
    expect(plan.added.find((a) => a.id === "github")?.from).toHaveLength(2);
    expect(plan.added.find((a) => a.id === "brave-search")?.renamedFrom).toBe("brave search");
    expect(plan.duplicates.map((d) => d.id)).toEqual(["github", "memory"]);
    expect(plan.clashes).toHaveLength(2);
    expect(plan.clashes[0]).toMatch(
      /^"filesystem": claude-desktop .* and cursor .* configure it differently; not imported/,
    );
    expect(plan.clashes[1]).toMatch(
      /^"playwright" from vscode .* differs from the server of that id already in/,
    );
    expect(plan.skipped).toHaveLength(2);
    expect(plan.skipped[0]).toMatch(/^"asana" from claude-code .*: SSE servers are not supported/);
    expect(plan.skipped[1]).toMatch(
      /^"insecure" from cursor .*: `url` uses plain http to mcp\.example\.com/,
    );
    expect(plan.notes.join("\n")).toMatch(/"perplexity" uses VS Code's \$\{input:…\}/);

    // A dry run: the file is untouched. The diff adds lines, and takes away only the last
    // entry's line to give it back with the comma JSON needs after it.
    expect(readFileSync(machine.target, "utf8")).toBe(before);
    const removed = plan.diff.split("\n").filter((l) => /^-[^-]/.test(l));
    expect(removed).toEqual([
      '-    "playwright": { "command": "npx", "args": ["@playwright/mcp@0.0.30"] }',
    ]);
    expect(plan.diff).toContain(
      '+    "playwright": { "command": "npx", "args": ["@playwright/mcp@0.0.30"] },',
    );
    expect(plan.diff).toContain(`--- ${machine.target}\n+++ ${machine.target} (imported)\n@@ `);
    expect(plan.diff).toContain('+        "Authorization": "Bearer ${SENTRY_TOKEN}"');
  });

  it("writes the merge keeping a backup, the user's comments, and every placeholder verbatim", async () => {
    const machine = linuxMachine();
    const before = readFileSync(machine.target, "utf8");
    const plan = await planImport({ target: machine.target, where: machine.where });
    const now = new Date("2026-03-04T05:06:07.890Z");
    const backup = await writeImport(plan, now);
    expect(backup).toBe(`${machine.target}.mcpool-backup-2026-03-04T05-06-07Z`);
    expect(backupPath(machine.target, now)).toBe(backup);
    expect(readFileSync(backup!, "utf8")).toBe(before);

    const after = readFileSync(machine.target, "utf8");
    for (const line of before.split("\n").filter((l) => l.trim().startsWith("//"))) {
      expect(after).toContain(line);
    }
    const { rows, problems, pool } = parseMcpJson(after, { env: {} });
    expect(problems).toEqual([]);
    expect(pool).toEqual({ callTimeoutMs: 30000 });
    expect(rows.map((r) => r.id)).toEqual([
      "echo",
      "memory",
      "playwright",
      "github",
      "sentry",
      "api",
      "brave-search",
      "perplexity",
      "time",
    ]);
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(byId.sentry).toEqual({
      id: "sentry",
      transport: "http",
      url: "https://mcp.sentry.dev/mcp",
      label: "sentry",
      headers: { Authorization: "Bearer ${SENTRY_TOKEN}" },
    });
    expect(byId.api).toMatchObject({ url: "${API_BASE_URL:-https://api.example.com}/mcp" });
    expect(byId.github).toMatchObject({ env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_TOKEN}" } });
    expect(byId["brave-search"]).toMatchObject({
      label: "brave search",
      env: { BRAVE_API_KEY: "${env:BRAVE_API_KEY}" },
    });
    expect(byId.time).toMatchObject({ args: ["mcp-server-time", "--local-timezone=${TZ:-UTC}"] });
    // The kept playwright is mcpool's, not VS Code's.
    expect(byId.playwright).toMatchObject({ args: ["@playwright/mcp@0.0.30"] });

    // Importing again finds nothing new: everything is a duplicate now.
    const again = await planImport({ target: machine.target, where: machine.where });
    expect(again.added).toEqual([]);
    expect(again.diff).toBe("");
  });

  it("says when it imports a url ending in /sse as Streamable HTTP, and skips an entry typed sse", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcpool-import-"));
    dirs.push(home);
    write(
      join(home, ".cursor", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          events: { url: "https://mcp.example.com/sse" },
          legacy: { type: "sse", url: "https://old.example.com/events" },
          modern: { url: "https://mcp.example.com/mcp" },
        },
      }),
    );
    const target = join(home, ".config", "mcpool", "mcp.json");
    const plan = await planImport({
      target,
      where: { home, cwd: home, platform: "linux", env: {} },
      hosts: ["cursor"],
    });
    expect(plan.added.map((a) => a.id)).toEqual(["events", "modern"]);
    const notes = plan.notes.join("\n");
    expect(notes).toMatch(
      /"events" is imported as a Streamable HTTP server, but its url ends in \/sse/,
    );
    expect(notes).not.toMatch(/"modern"/);
    expect(plan.skipped).toEqual([
      expect.stringMatching(/^"legacy" from cursor .*: SSE servers are not supported/),
    ]);
  });

  it("reads the macOS locations, and only the hosts asked for", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcpool-import-mac-"));
    dirs.push(home);
    const support = join(home, "Library", "Application Support");
    write(
      join(support, "Claude", "claude_desktop_config.json"),
      JSON.stringify({ mcpServers: { fetch: { command: "uvx", args: ["mcp-server-fetch"] } } }),
    );
    write(
      join(support, "Code", "User", "mcp.json"),
      '{\n\t"servers": {\n\t\t"remote": { "type": "http", "url": "https://mcp.example.com/mcp" },\n\t},\n}\n',
    );
    write(
      join(home, ".config", "Claude", "claude_desktop_config.json"),
      '{"mcpServers": {"linux-only": {"command": "x"}}}',
    );
    const target = join(home, "mcpool", "mcp.json");
    const where: ImportWhere = { home, cwd: home, platform: "darwin", env: {} };
    const all = await planImport({ target, where });
    expect(all.added.map((a) => a.id)).toEqual(["fetch", "remote"]);
    // No mcp.json yet: it is created, with nothing to back up.
    expect(all.before).toBeUndefined();
    expect(await writeImport(all)).toBeUndefined();
    expect(parseMcpJson(readFileSync(target, "utf8")).rows.map((r) => r.id)).toEqual([
      "fetch",
      "remote",
    ]);
    rmSync(target);
    const vscodeOnly = await planImport({ target, where, hosts: ["vscode"] });
    expect(vscodeOnly.added.map((a) => a.id)).toEqual(["remote"]);
  });

  it("leaves out entries already wired to mcpool (a bridge or a stock pipe), saying so", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcpool-import-wired-"));
    dirs.push(home);
    const socket = join(home, "run", "mcpool", "mcp", "everything.sock");
    write(
      join(home, ".config", "Claude", "claude_desktop_config.json"),
      JSON.stringify({
        mcpServers: {
          everything: { command: "/usr/bin/perl", args: ["-e", "relay", socket] },
          memory: { command: "node", args: ["/x/bin.js", "bridge", "--server", "memory"] },
          fetch: { command: "uvx", args: ["mcp-server-fetch"] },
        },
      }),
    );
    const target = join(home, "mcpool", "mcp.json");
    const where: ImportWhere = { home, cwd: home, platform: "linux", env: {} };
    const plan = await planImport({ target, where });
    expect(plan.added.map((a) => a.id)).toEqual(["fetch"]);
    expect(plan.clashes).toEqual([]);
    expect(plan.skipped).toEqual([
      expect.stringMatching(/^"everything" from .*: it already goes through mcpool/),
      expect.stringMatching(/^"memory" from .*: it already goes through mcpool/),
    ]);
  });

  it("runs as a command: a dry run prints the diff, --write writes, a bad --from is refused", () => {
    const machine = linuxMachine();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: machine.home,
      XDG_CONFIG_HOME: join(machine.home, ".config"),
      MCPOOL_CONFIG: machine.target,
    };
    delete env.CLAUDE_CONFIG_DIR;
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [cliPath, "import", ...args], {
        env,
        cwd: machine.project,
        encoding: "utf8",
        timeout: 30_000,
      });
    const before = readFileSync(machine.target, "utf8");
    const dry = run("--from", "cursor,claude-code");
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(/^--- .*mcp\.json\n\+\+\+ .*mcp\.json \(imported\)\n@@ /);
    expect(dry.stdout).toContain('+    "brave-search": {');
    expect(dry.stdout).not.toContain("perplexity");
    expect(dry.stderr).toMatch(/skipped "asana"/);
    expect(dry.stderr).toMatch(/dry run: nothing was written/);
    expect(readFileSync(machine.target, "utf8")).toBe(before);

    const written = run("--from", "cursor,claude-code", "--write");
    expect(written.status).toBe(0);
    expect(written.stderr).toMatch(
      /wrote .*mcp\.json \(the old one is .*mcp\.json\.mcpool-backup-/,
    );
    const backups = readdirSync(dirname(machine.target)).filter((f) =>
      f.startsWith("mcp.json.mcpool-backup-"),
    );
    expect(backups).toHaveLength(1);
    expect(parseMcpJson(readFileSync(machine.target, "utf8")).rows.map((r) => r.id)).toContain(
      "sentry",
    );

    const json = run("--json");
    expect(JSON.parse(json.stdout)).toMatchObject({ written: false });
    const bad = run("--from", "emacs");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown host "emacs"/);
    expect(existsSync(machine.target)).toBe(true);
    // Four CLI processes, each a cold Node start.
  }, 60_000);

  it("never prints a secret in its diff, and names the project of each side of a clash", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcpool-import-"));
    dirs.push(home);
    const target = join(home, ".config", "mcpool", "mcp.json");
    const db = (url: string) => ({
      command: "db-mcp",
      env: { DATABASE_URL: url, TOKEN_FILE: "${TOKEN_FILE}" },
    });
    write(
      join(home, ".claude.json"),
      JSON.stringify({
        mcpServers: {
          remote: {
            type: "http",
            url: "https://mcp.example.com/mcp",
            headers: { "X-Api-Key": "sk-live-0123456789" },
          },
        },
        projects: {
          "/work/a": { mcpServers: { db: db("postgres://ada:hunter2-secret@db-a/x") } },
          "/work/b": { mcpServers: { db: db("postgres://ada:hunter2-secret@db-b/x") } },
        },
      }),
    );
    const plan = await planImport({
      target,
      hosts: ["claude-code"],
      where: { home, cwd: home, platform: "linux", env: {} },
    });
    expect(plan.added.map((a) => a.id)).toEqual(["remote"]);
    expect(plan.diff).toContain('+        "X-Api-Key": "[redacted]"');
    expect(plan.diff).not.toContain("sk-live-0123456789");
    const claude = join(home, ".claude.json");
    expect(plan.clashes).toEqual([
      `"db": claude-code (${claude} project /work/a) and claude-code (${claude} project /work/b) configure it differently; not imported — rename one in its host, or add it by hand`,
    ]);
  });

  it("makes ids from host keys that cannot name tools", () => {
    expect(idFor("brave search")).toBe("brave-search");
    expect(idFor("@scope/server.fs")).toBe("scope-server-fs");
    expect(idFor("ünïcode")).toBe("n-code");
    expect(idFor("!!!")).toBe("server");
  });
});

describe("unifiedDiff", () => {
  it("prints hunks with three lines of context and line numbers as diff -u does", () => {
    const before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
    const after = "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n";
    expect(unifiedDiff(before, after, "x", "y")).toBe(
      [
        "--- x",
        "+++ y",
        "@@ -2,9 +2,10 @@",
        " b",
        " c",
        " d",
        "-e",
        "+E",
        " f",
        " g",
        " h",
        " i",
        " j",
        "+k",
        "",
      ].join("\n"),
    );
    expect(unifiedDiff(before, before, "x", "y")).toBe("");
    expect(unifiedDiff("", "one\n", "x", "y")).toBe("--- x\n+++ y\n@@ -0,0 +1,1 @@\n+one\n");
  });
});
