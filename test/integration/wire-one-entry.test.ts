/**
 * `mcpool wire <host> --catalog --one-entry` and `mcpool unwire <host>`, through the built CLI
 * and a real daemon: for every host, JSON, TOML (Codex) or YAML (Goose, Continue), the entries
 * mcpool has become one pool-wide catalogue entry, `mcpool`, the rest of the file as it was;
 * wiring again changes nothing; unwire of a TOML or YAML file gives back its very bytes; a host spawning that
 * entry as written — an SDK v1 (2025-11-25) and an SDK v2 (2026-07-28) host — lists the
 * pool's three tools and reaches a server through call_tool; `unwire` takes the entry out
 * and puts back what it replaced.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOSTS, hostConfigPath, hostFormat, type HostName } from "../../src/cli/hosts/configs.js";
import { replacedPath } from "../../src/cli/hosts/one-entry.js";
import { wiredRecordPath } from "../../src/cli/hosts/wired-record.js";
import { binPath, stringEnv } from "../helpers/bridge.js";
import { cliPath, startDaemon, testHome, type RunningDaemon } from "../helpers/daemon.js";
import { entryCommand, hostFileText } from "../helpers/host-files.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const ECHO = { command: process.execPath, args: [fixture("echo.mjs")], env: {} };
const META_TOOLS = ["search_tools", "describe_tool", "call_tool"];
const JSON_HOSTS = HOSTS.filter((host) => hostFormat(host) === "json");

const textOf = (result: unknown): string =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("");

describe("mcpool wire --catalog --one-entry, and unwire", () => {
  const home = testHome("mcpool-wire-one-");
  let daemon: RunningDaemon | undefined;
  const where = { home: home.dir, platform: "linux" as const, env: home.env };

  const mcpool = (...args: string[]) =>
    spawnSync(process.execPath, [cliPath, ...args], {
      env: home.env,
      cwd: join(home.dir, "project"),
      encoding: "utf8",
      timeout: 30_000,
    });

  beforeAll(async () => {
    mkdirSync(join(home.dir, "project"), { recursive: true });
    home.writeConfig({ echo: { command: ECHO.command, args: ECHO.args } });
    daemon = await startDaemon(home);
  }, 30_000);

  afterAll(async () => {
    await daemon?.stop();
    home.remove();
  });

  /** What the pool-wide entry runs. */
  const poolCommand = (): string[] => [
    process.execPath,
    binPath,
    "bridge",
    "--catalog",
    "--socket",
    home.socketPath,
  ];

  /** `host`'s file holding `text` (the echo server as the host lists it), and its path. */
  function hostWithEcho(host: HostName, text = hostFileText(host, "echo", ECHO)): string {
    const path = hostConfigPath(host, where);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  it("refuses, changing nothing, when the record of replaced entries is there but does not parse", () => {
    const path = hostWithEcho("cursor");
    const original = readFileSync(path, "utf8");
    writeFileSync(replacedPath(path), "{ half a record");
    for (const args of [
      ["wire", "cursor", "--catalog", "--one-entry", "--write"],
      ["unwire", "cursor", "--write"],
    ]) {
      const run = mcpool(...args);
      expect(run.status, run.stdout).toBe(1);
      expect(run.stderr).toContain(`${replacedPath(path)} does not parse`);
      expect(readFileSync(path, "utf8")).toBe(original);
      expect(readFileSync(replacedPath(path), "utf8")).toBe("{ half a record");
    }
    rmSync(replacedPath(path));
  });

  it("unwire keeps in the record the entries it could not put back", () => {
    const path = hostWithEcho("cursor");
    const wired = mcpool("wire", "cursor", "--catalog", "--one-entry", "--write");
    expect(wired.status, wired.stderr).toBe(0);
    const record = readFileSync(replacedPath(path), "utf8");
    // The user adds an entry of the replaced one's name: unwire cannot put it back.
    const mine = { command: "my-echo", args: [] };
    const root = parse(readFileSync(path, "utf8")) as { mcpServers: Record<string, unknown> };
    root.mcpServers.echo = mine;
    writeFileSync(path, JSON.stringify(root, null, 2));
    const unwired = mcpool("unwire", "cursor", "--write");
    expect(unwired.status, unwired.stderr).toBe(0);
    expect(unwired.stdout).toContain("not put back, an entry of that name is there now: echo");
    expect(readFileSync(replacedPath(path), "utf8")).toBe(record);
    expect((parse(readFileSync(path, "utf8")) as typeof root).mcpServers).toEqual({ echo: mine });
    rmSync(replacedPath(path));
  });

  /** Each text format's file: two servers mcpool has among comments and unrelated keys. */
  const TEXT_FILES: Record<"codex" | "goose" | "continue", string> = {
    codex: [
      "# my Codex settings",
      'model = "o4-mini" # the model',
      "",
      "[mcp_servers.echo]",
      `command = ${JSON.stringify(ECHO.command)} # the echo server`,
      `args = ${JSON.stringify(ECHO.args)}`,
      "",
      "# not mcpool's",
      "[mcp_servers.mine]",
      'command = "my-server"',
      "",
      "[mcp_servers.again]",
      `command = ${JSON.stringify(ECHO.command)}`,
      `args = [`,
      `  ${JSON.stringify(ECHO.args[0])},`,
      `]`,
      "[mcp_servers.again.env]",
      "",
      "[profiles.fast]",
      'model = "gpt-5"',
      "",
    ].join("\n"),
    goose: [
      "# Goose",
      "GOOSE_PROVIDER: openai",
      "extensions:",
      "  # the echo server",
      "  echo:",
      `    cmd: ${JSON.stringify(ECHO.command)}`,
      `    args: [${JSON.stringify(ECHO.args[0])}]`,
      "    enabled: true",
      "    name: echo",
      "    timeout: 300",
      "    type: stdio",
      "  mine:",
      "    cmd: my-server # not mcpool's",
      "    enabled: true",
      "    name: mine",
      "    type: stdio",
      "  again:",
      `    cmd: ${JSON.stringify(ECHO.command)}`,
      "    args:",
      `      - ${JSON.stringify(ECHO.args[0])}`,
      "    enabled: true",
      "    name: again",
      "    type: stdio",
      "GOOSE_MODEL: gpt-5 # after",
      "",
    ].join("\n"),
    continue: [
      "name: my assistant # Continue",
      "version: 1.0.0",
      "mcpServers:",
      "  # the echo server",
      "  - name: echo",
      `    command: ${JSON.stringify(ECHO.command)}`,
      `    args: [${JSON.stringify(ECHO.args[0])}]`,
      "  - name: mine",
      "    command: my-server",
      "  - name: again",
      `    command: ${JSON.stringify(ECHO.command)}`,
      "    args:",
      `      - ${JSON.stringify(ECHO.args[0])}`,
      "models: [] # after",
      "",
    ].join("\n"),
  };

  /** A host's file, the entries the pool-wide one takes the place of, and what unwire says. */
  interface OneEntryCase {
    host: HostName;
    text: string;
    replaced: string[];
    unwound: string;
  }
  const CASES: OneEntryCase[] = [
    ...JSON_HOSTS.map((host) => ({
      host,
      text: hostFileText(host, "echo", ECHO),
      replaced: ["echo"],
      unwound: "mcpool: the pool-wide catalogue entry goes; back as they were: echo",
    })),
    ...(["codex", "goose", "continue"] as const).map((host) => ({
      host,
      text: TEXT_FILES[host],
      replaced: ["echo", "again"],
      unwound: "mcpool (the pool-wide catalogue entry, in place of echo, again)",
    })),
  ];

  for (const { host, text, replaced, unwound } of CASES) {
    it(`${host}: one catalogue entry in place of ${replaced.join(" and ")}, the rest kept, idempotent; unwire undoes it`, () => {
      const path = hostWithEcho(host, text);
      const wired = mcpool("wire", host, "--catalog", "--one-entry", "--write");
      expect(wired.status, wired.stderr).toBe(0);
      expect(wired.stdout).toContain(`in place of ${replaced.join(", ")}`);
      const after = readFileSync(path, "utf8");
      expect(entryCommand(host, after, "mcpool")).toEqual(poolCommand());
      for (const name of replaced) expect(() => entryCommand(host, after, name)).toThrow();
      // What is not mcpool's stays, comments and all.
      for (const line of text.split("\n").filter((l) => l.includes("#") && !l.includes("echo"))) {
        expect(after).toContain(line);
      }
      if (text.includes("my-server")) expect(after).toContain("my-server");
      const again = mcpool("wire", host, "--catalog", "--one-entry", "--write");
      expect(again.status, again.stderr).toBe(0);
      expect(again.stdout).toContain("nothing to wire");
      expect(readFileSync(path, "utf8")).toBe(after);
      const unwired = mcpool("unwire", host, "--write");
      expect(unwired.status, unwired.stderr).toBe(0);
      expect(unwired.stdout).toContain(unwound);
      const back = readFileSync(path, "utf8");
      // A TOML or YAML file's very bytes; a JSON file's meaning.
      if (hostFormat(host) === "json") expect(parse(back)).toEqual(parse(text));
      else expect(back).toBe(text);
      expect(existsSync(replacedPath(path))).toBe(false);
      expect(existsSync(wiredRecordPath(path))).toBe(false);
    });
  }

  it("refuses, changing nothing, when a TOML or YAML host's record does not parse; and --one-entry without --catalog", () => {
    for (const host of ["codex", "goose", "continue"] as const) {
      const path = hostWithEcho(host);
      const original = readFileSync(path, "utf8");
      writeFileSync(wiredRecordPath(path), "{ half a record");
      for (const args of [
        ["wire", host, "--catalog", "--one-entry", "--write"],
        ["unwire", host, "--write"],
      ]) {
        const run = mcpool(...args);
        expect(run.status, run.stdout).toBe(1);
        expect(run.stderr).toContain(`${wiredRecordPath(path)} does not parse`);
        expect(readFileSync(path, "utf8")).toBe(original);
        expect(readFileSync(wiredRecordPath(path), "utf8")).toBe("{ half a record");
      }
      rmSync(wiredRecordPath(path));
    }
    const bare = mcpool("wire", "cursor", "--one-entry");
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain("--one-entry goes with --catalog");
  });

  for (const era of ["legacy", "modern"] as const) {
    it(`a ${era === "legacy" ? "SDK v1" : "SDK v2 (2026-07-28)"} host through the written entry lists the three catalogue tools and calls a server`, async () => {
      const path = hostWithEcho("claude-code");
      const wired = mcpool("wire", "claude-code", "--catalog", "--one-entry", "--write");
      expect(wired.status, wired.stderr).toBe(0);
      const [command, ...args] = entryCommand("claude-code", readFileSync(path, "utf8"), "mcpool");
      const stdio = { command: command!, args, env: stringEnv(home.env) };
      const host =
        era === "legacy"
          ? new Client({ name: "v1-host", version: "1.0.0" })
          : new ModernClient(
              { name: "v2-host", version: "1.0.0" },
              { versionNegotiation: { mode: { pin: "2026-07-28" } } },
            );
      const transport = era === "legacy" ? new StdioClientTransport(stdio) : new ModernStdio(stdio);
      await host.connect(transport as never);
      try {
        const listed = (await host.listTools()).tools.map((tool) => tool.name);
        expect(listed).toEqual(META_TOOLS);
        const called = await host.callTool({
          name: "call_tool",
          arguments: { name: "echo__echo", arguments: { text: era } },
        });
        expect(textOf(called)).toBe(era);
      } finally {
        const pid = transport.pid;
        await host.close();
        if (pid !== null) await waitFor(() => !alive(pid), 10_000, "the host's entry to exit");
      }
    });
  }
});
