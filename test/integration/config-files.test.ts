/**
 * Config files as hosts write them: the files under test/fixtures/configs are
 * kept byte for byte — Claude Desktop's plain JSON, Cursor's `${env:…}`, Claude Code's
 * `type` and `${VAR:-default}`, VS Code's tab-indented JSONC with comments, trailing commas
 * and `inputs` — and read through the browser-safe entry.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ConfigSyntaxError,
  fromMcpServersJson,
  parseMcpJson,
  validateServerConfig,
} from "../../src/config/index.js";
import { cliPath } from "../helpers/daemon.js";
import { fixture } from "../helpers/processes.js";

const read = (name: string): string => readFileSync(fixture(`configs/${name}`), "utf8");
const env = { HOME: "/home/ada", LINEAR_API_KEY: "lin_api_123", SENTRY_TOKEN: "sntr" };

describe("config files as each host writes them", () => {
  it("reads Claude Desktop's claude_desktop_config.json, ignoring its other settings", () => {
    const { rows, problems, warnings, pool } = parseMcpJson(read("claude_desktop_config.json"), {
      env,
    });
    expect(problems).toEqual([]);
    expect(warnings).toEqual([]);
    expect(pool).toEqual({});
    expect(rows).toEqual([
      {
        id: "filesystem",
        transport: "stdio",
        command: "npx",
        label: "filesystem",
        args: [
          "-y",
          "@modelcontextprotocol/server-filesystem",
          "/Users/ada/Desktop",
          "/Users/ada/Downloads",
        ],
      },
      {
        id: "github",
        transport: "stdio",
        command: "docker",
        label: "github",
        args: [
          "run",
          "-i",
          "--rm",
          "-e",
          "GITHUB_PERSONAL_ACCESS_TOKEN",
          "ghcr.io/github/github-mcp-server",
        ],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_literalTokenPastedFromAReadme" },
      },
    ]);
  });

  it("reads Cursor's mcp.json: a url without a type is http, disabled is enabled: false, ${env:VAR} kept", () => {
    const { rows, problems, warnings } = parseMcpJson(read("cursor-mcp.json"), { env });
    expect(problems).toEqual([]);
    expect(rows).toEqual([
      {
        id: "linear",
        transport: "http",
        url: "https://mcp.linear.app/mcp",
        label: "linear",
        headers: { Authorization: "Bearer ${env:LINEAR_API_KEY}" },
      },
      {
        id: "postgres",
        transport: "stdio",
        command: "npx",
        enabled: false,
        label: "postgres",
        args: ["-y", "@modelcontextprotocol/server-postgres", "${env:DATABASE_URL}"],
      },
      {
        id: "local-docs",
        transport: "http",
        url: "http://localhost:3845/mcp",
        label: "local-docs",
      },
    ]);
    // Set in env: no warning, and still not expanded into the row.
    expect(warnings).toEqual([
      {
        message:
          "`postgres`: ${DATABASE_URL} is not set and has no default; it is passed on as written",
        id: "postgres",
        line: 9,
        column: 5,
      },
    ]);
  });

  it("reads Claude Code's .mcp.json: type, ${VAR:-default} in a url, and refuses sse with a message and its line", () => {
    const { rows, problems, warnings } = parseMcpJson(read("claude-code.mcp.json"), { env });
    expect(rows.map((r) => [r.id, r.transport])).toEqual([
      ["sentry", "http"],
      ["api", "http"],
      ["memory", "stdio"],
    ]);
    expect(rows[1]).toMatchObject({
      url: "${API_BASE_URL:-https://api.example.com}/mcp",
      headers: { "X-Api-Key": "${API_KEY}" },
    });
    expect(rows[2]).toMatchObject({ env: { MEMORY_FILE_PATH: "${HOME}/.cache/memory.json" } });
    expect(problems).toEqual([
      {
        message:
          '`asana`: SSE servers are not supported: mcpool speaks Streamable HTTP. Most servers serve it at the same host, often under /mcp; set "type": "http" and that url',
        id: "asana",
        line: 25,
        column: 5,
      },
    ]);
    expect(warnings.map((w) => [w.id, w.line])).toEqual([["api", 10]]);
  });

  it("reads VS Code's tab-indented JSONC mcp.json with comments, trailing commas and inputs", () => {
    const { rows, problems, warnings } = parseMcpJson(read("vscode-mcp.json"), { env: {} });
    expect(problems).toEqual([]);
    expect(rows).toEqual([
      {
        id: "playwright",
        transport: "stdio",
        command: "npx",
        label: "playwright",
        args: ["@playwright/mcp@latest"],
      },
      {
        id: "perplexity",
        transport: "stdio",
        command: "npx",
        label: "perplexity",
        args: ["-y", "server-perplexity-ask"],
        // VS Code's own `${input:…}` is not ours: left alone, and no warning for it.
        env: { PERPLEXITY_API_KEY: "${input:perplexity-key}", HOME_DIR: "${env:HOME}" },
      },
      {
        id: "github",
        transport: "http",
        url: "https://api.githubcopilot.com/mcp/",
        label: "github",
      },
    ]);
    expect(warnings.map((w) => w.message)).toEqual([
      "`perplexity`: ${HOME} is not set and has no default; it is passed on as written",
    ]);
  });

  it("reads mcpool's own file: the pool section, httpUrl, transport and type spellings, and every bad row with its line", () => {
    const { rows, pool, problems } = parseMcpJson(read("mcpool-own.json"), { env: {} });
    expect(pool).toEqual({ callTimeoutMs: 30000, childEnv: "minimal" });
    expect(rows).toEqual([
      {
        id: "echo",
        transport: "stdio",
        command: "node",
        label: "Echo",
        lazy: true,
        args: ["echo.mjs"],
      },
      {
        id: "gemini-style",
        transport: "http",
        url: "https://mcp.example.com/mcp",
        label: "gemini-style",
      },
      // A placeholder host passes validation; the policy is applied to what it expands to.
      { id: "streamable", transport: "http", url: "https://${MCP_HOST}/mcp", label: "streamable" },
    ]);
    expect(problems.map((p) => [p.id, p.line])).toEqual([
      ["bad id!", 8],
      ["no-command", 9],
      ["plain-remote", 10],
    ]);
    expect(problems[2]?.message).toMatch(/plain http to mcp\.example\.com/);
    for (const row of rows) expect(validateServerConfig(row)).toEqual([]);
  });

  it("reads a bare name-keyed map and a single bare body with a name", () => {
    expect(fromMcpServersJson(read("bare-map.json"), { env: {} })).toEqual([
      {
        id: "fetch",
        transport: "stdio",
        command: "uvx",
        label: "fetch",
        args: ["mcp-server-fetch"],
      },
      {
        id: "time",
        transport: "stdio",
        command: "uvx",
        label: "time",
        args: ["mcp-server-time", "--local-timezone=${TZ:-UTC}"],
      },
    ]);
    expect(fromMcpServersJson(read("bare-body.json"))).toEqual([
      {
        id: "everything",
        transport: "stdio",
        command: "npx",
        label: "everything",
        args: ["-y", "@modelcontextprotocol/server-everything"],
      },
    ]);
  });

  it("never expands placeholders into rows, whatever env holds", () => {
    const rows = fromMcpServersJson(read("claude-code.mcp.json"), {
      env: { API_KEY: "k-123", API_BASE_URL: "https://other.example", HOME: "/h" },
    });
    expect(JSON.stringify(rows)).not.toMatch(/k-123|other\.example|"\/h\//);
  });

  it("refuses a file that does not parse, with its line and column", () => {
    const error = (() => {
      try {
        parseMcpJson(read("broken.json"));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigSyntaxError);
    expect(error).toMatchObject({ line: 4, column: 5 });
    expect((error as Error).message).toBe(
      "expected a `,` before the next entry at line 4, column 5",
    );
  });

  it("mcpool validate prints each problem and each unset placeholder with its line", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, API_BASE_URL: "", SENTRY_TOKEN: "set" };
    delete env.API_KEY;
    const path = fixture("configs/claude-code.mcp.json");
    const result = spawnSync(process.execPath, [cliPath, "validate", path], {
      env,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(result.status).toBe(2);
    expect(result.stdout.split("\n")).toEqual([
      `${path}:25:5: \`asana\`: SSE servers are not supported: mcpool speaks Streamable HTTP. Most servers serve it at the same host, often under /mcp; set "type": "http" and that url`,
      `${path}:10:5: warning: \`api\`: \${API_KEY} is not set and has no default; it is passed on as written`,
      "3 valid server(s), 1 problem(s)",
      "",
    ]);
  });
});
