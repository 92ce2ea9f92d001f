/**
 * Import and wire for every host beyond the first four, each host's file written
 * the way that host writes it (shapes from each host's documentation, with comments where
 * the format allows), at its place on Linux and on macOS. Import must find each file and
 * add its servers, skipping what mcpool cannot run with the reason; wire must turn every
 * entry mcpool has into the host's own spelling of `mcpool bridge --server ID`, keeping the
 * entry's other keys and the rest of the file — byte for byte for Codex's TOML and Goose's
 * YAML.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { HostEnvironment, HostName } from "../../src/cli/hosts/configs.js";
import { planImport, writeImport } from "../../src/cli/hosts/import.js";
import { runWire } from "../../src/cli/hosts/wire.js";
import { cliPath } from "../helpers/daemon.js";
import { HOST_CASES, WIRED_SOCKET, type HostCase } from "../helpers/host-cases.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const BRIDGE = ["/usr/bin/node", "/opt/mcpool/dist/cli/main.js"] as const;
/** The daemon's socket the entries name (no daemon there: no stock pipe is taken). */
const SOCKET = WIRED_SOCKET;
const bridgeArgs = (id: string): string[] => [
  BRIDGE[1],
  "bridge",
  "--server",
  id,
  "--socket",
  SOCKET,
];

/** `mcpool wire` in this process, with the bridge at `BRIDGE`: its exit code and output. */
async function wire(
  host: HostName,
  configPath: string,
  where: HostEnvironment,
  flags: { write: boolean; json?: boolean },
): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const push = (line: string) => lines.push(line);
  const code = await runWire({
    host,
    ...flags,
    configPath,
    socketPath: SOCKET,
    where,
    command: BRIDGE,
    out: push,
    err: push,
  });
  return { code, output: lines.join("\n") };
}

/** The host's map of entries in its parsed file. */
function entriesOf(host: HostName, text: string): Record<string, Record<string, unknown>> {
  if (host === "codex") return parseToml(text).mcp_servers as never;
  if (host === "goose") return (parseYaml(text) as { extensions: never }).extensions;
  if (host === "continue") {
    const list = (parseYaml(text) as { mcpServers: Record<string, unknown>[] }).mcpServers;
    return Object.fromEntries(list.map((e, i) => [(e.name as string) ?? `#${i}`, e])) as never;
  }
  const root = parseJsonc(text) as Record<string, Record<string, never>>;
  if (host === "opencode" || host === "kilo") return root.mcp!;
  if (host === "zed") return root.context_servers!;
  return root.mcpServers!;
}

/** What a wired entry of `host` holds, for the server `id`, its other keys aside. */
function bridgeShape(host: HostName, id: string): Record<string, unknown> {
  if (host === "opencode" || host === "kilo") {
    return { type: "local", command: [BRIDGE[0], ...bridgeArgs(id)] };
  }
  if (host === "goose") return { type: "stdio", cmd: BRIDGE[0], args: bridgeArgs(id) };
  return { command: BRIDGE[0], args: bridgeArgs(id) };
}

function machine(platform: "linux" | "darwin", hostCase: HostCase) {
  const home = mkdtempSync(join(tmpdir(), `mcpool-hosts-${hostCase.host}-`));
  dirs.push(home);
  const file = join(home, hostCase.file[platform]);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, hostCase.text);
  const where = { home, platform, env: {} };
  const target = join(home, "mcpool", "mcp.json");
  /** The import plan of this host alone, run from a project with no files of its own. */
  const plan = () =>
    planImport({ target, hosts: [hostCase.host], where: { ...where, cwd: join(home, "project") } });
  return { file, where, target, plan };
}

describe.each(["linux", "darwin"] as const)("every host on %s", (platform) => {
  describe.each(HOST_CASES)("$host", (hostCase) => {
    it("imports its servers from the host's own file and says what it skips and why", async () => {
      const { file, target, ...on } = machine(platform, hostCase);
      const plan = await on.plan();
      expect(plan.unreadable).toEqual([]);
      expect(plan.files.map((f) => f.file)).toEqual([file]);
      expect(plan.added.map((a) => a.id)).toEqual(hostCase.imported.map(([id]) => id));
      expect(plan.files[0]!.skipped.map((s) => s.name)).toEqual(
        hostCase.skipped.map(([name]) => name),
      );
      for (const [i, [, why]] of hostCase.skipped.entries()) {
        expect(plan.files[0]!.skipped[i]!.why).toMatch(why);
      }
      await writeImport(plan);
      const written = parseJsonc(readFileSync(target, "utf8")) as {
        mcpServers: Record<string, unknown>;
      };
      for (const [id, body] of hostCase.imported) expect(written.mcpServers[id]).toEqual(body);
    });

    it("wires every entry mcpool has in the host's spelling, and leaves the rest", async () => {
      const { file, where, target, plan } = machine(platform, hostCase);
      await writeImport(await plan());
      const { code, output } = await wire(hostCase.host, target, where, {
        write: true,
        json: true,
      });
      expect(code, output).toBe(0);
      const report = JSON.parse(output) as {
        host: string;
        file: string;
        servers: { name: string; server: string }[];
        skipped: { name: string; why: string }[];
        written: boolean;
      };
      expect(report).toMatchObject({ host: hostCase.host, file, written: true });
      expect(report.servers.map((s) => [s.name, s.server])).toEqual(hostCase.wired);
      expect(report.skipped.map((s) => s.name)).toEqual(hostCase.left);

      const after = readFileSync(file, "utf8");
      const entries = entriesOf(hostCase.host, after);
      for (const [name, id] of hostCase.wired) {
        expect(entries[name]).toEqual({
          ...bridgeShape(hostCase.host, id),
          ...hostCase.kept[name],
        });
      }
      const before = entriesOf(hostCase.host, hostCase.text);
      for (const name of hostCase.left) expect(entries[name]).toEqual(before[name]);
      for (const comment of hostCase.text.split("\n").filter((l) => /^\s*(#|\/\/)/.test(l))) {
        expect(after).toContain(comment);
      }
      if (hostCase.exact !== undefined) expect(after).toBe(hostCase.exact(BRIDGE));
    });
  });
});

describe("secrets and the list of hosts", () => {
  it("shows Codex and Goose env and header values as [redacted] in wire's diff", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcpool-hosts-secrets-"));
    dirs.push(home);
    const where = { home, platform: "linux" as const, env: {} };
    const target = join(home, "mcpool", "mcp.json");
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(
      target,
      JSON.stringify({
        mcpServers: {
          db: { command: "db-mcp", env: { DB_PASSWORD: "hunter2-toml", HOME_DIR: "${HOME}" } },
          api: {
            type: "http",
            url: "https://api.example.com/mcp",
            headers: { "X-Api-Key": "sk-live-yaml" },
          },
          hub: {
            type: "http",
            url: "https://hub.example.com/mcp",
            headers: { "X-Token": "tok-inline-toml" },
          },
        },
      }),
    );
    const codexFile = join(home, ".codex", "config.toml");
    mkdirSync(dirname(codexFile), { recursive: true });
    writeFileSync(
      codexFile,
      [
        "[mcp_servers.db]",
        'command = "db-mcp"',
        "",
        "[mcp_servers.db.env]",
        'DB_PASSWORD = "hunter2-toml"',
        'HOME_DIR = "${HOME}"',
        "",
        "[mcp_servers.hub]",
        'url = "https://hub.example.com/mcp"',
        'http_headers = { "X-Token" = "tok-inline-toml" }',
        "",
      ].join("\n"),
    );
    const gooseFile = join(home, ".config", "goose", "config.yaml");
    mkdirSync(dirname(gooseFile), { recursive: true });
    writeFileSync(
      gooseFile,
      [
        "extensions:",
        "  api:",
        "    type: streamable_http",
        "    uri: https://api.example.com/mcp",
        "    headers:",
        "      X-Api-Key: sk-live-yaml",
        "",
      ].join("\n"),
    );
    for (const [host, secrets] of [
      ["codex", ["hunter2-toml", "tok-inline-toml"]],
      ["goose", ["sk-live-yaml"]],
    ] as const) {
      const { code, output } = await wire(host, target, where, { write: false });
      expect(code, output).toBe(0);
      expect(output).toContain("[redacted]");
      for (const secret of secrets) expect(output).not.toContain(secret);
      if (host === "codex") expect(output).toContain("${HOME}");
    }
  });

  it("import with no --from lists the hosts it found, what each holds, and what it could not read", () => {
    const home = mkdtempSync(join(tmpdir(), "mcpool-hosts-list-"));
    dirs.push(home);
    const put = (path: string, text: string) => {
      mkdirSync(dirname(join(home, path)), { recursive: true });
      writeFileSync(join(home, path), text);
    };
    const codexCase = HOST_CASES.find((c) => c.host === "codex")!;
    const gooseCase = HOST_CASES.find((c) => c.host === "goose")!;
    put(codexCase.file.linux, codexCase.text);
    put(gooseCase.file.linux, gooseCase.text);
    put(".gemini/settings.json", '{ "mcpServers": { "broken": ');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      MCPOOL_CONFIG: join(home, "mcpool", "mcp.json"),
    };
    for (const name of ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "APPDATA", "QWEN_HOME", "COPILOT_HOME"])
      delete env[name];
    for (const name of ["CONTINUE_GLOBAL_DIR", "CLINE_DIR", "CLINE_DATA_DIR"]) delete env[name];
    delete env.CLINE_MCP_SETTINGS_PATH;
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [cliPath, "import", ...args], {
        env,
        cwd: home,
        encoding: "utf8",
        timeout: 30_000,
      });
    const human = run();
    expect(human.status, human.stderr).toBe(0);
    expect(human.stderr).toContain(
      `read 2 server(s) from codex (${join(home, codexCase.file.linux)})`,
    );
    expect(human.stderr).toContain(
      `read 2 server(s) (2 skipped) from goose (${join(home, gooseCase.file.linux)})`,
    );
    expect(human.stderr).toMatch(
      new RegExp(
        `could not read gemini \\(${join(home, ".gemini", "settings.json")}\\): \\S+ at line 1`,
      ),
    );
    expect(human.stderr).toContain(
      "no config of claude-desktop, claude-code, cursor, vscode, windsurf, opencode, zed, cline, lm-studio, qwen, copilot, kilo, continue, cline-cli, augment",
    );

    const json = JSON.parse(run("--json").stdout) as {
      files: { host: string; file: string; servers: { name: string }[]; skipped: unknown[] }[];
      unreadable: { host: string }[];
    };
    expect(json.files.map((f) => [f.host, f.servers.map((s) => s.name)])).toEqual([
      ["codex", ["docs", "linear"]],
      ["goose", ["github", "remote"]],
    ]);
    expect(json.files[1]!.skipped).toEqual([
      { name: "developer", why: expect.stringMatching(/builtin/) as unknown },
      { name: "old-sse", why: expect.stringMatching(/SSE/) as unknown },
    ]);
    expect(json.unreadable.map((u) => u.host)).toEqual(["gemini"]);
  }, 60_000);
});
