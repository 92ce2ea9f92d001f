import { describe, expect, it } from "vitest";

import {
  sameConnection,
  type HttpServerConfig,
  type StdioServerConfig,
} from "../../src/config/index.js";

const stdio: StdioServerConfig = {
  id: "git",
  transport: "stdio",
  command: "uvx",
  args: ["mcp-server-git"],
  env: { TOKEN: "a" },
  cwd: "/srv/repo",
};

const http: HttpServerConfig = {
  id: "docs",
  transport: "http",
  url: "https://mcp.example.com/mcp",
  headers: { Authorization: "Bearer a" },
};

describe("sameConnection", () => {
  it("calls a row the same connection as an identical copy of itself", () => {
    expect(sameConnection(stdio, structuredClone(stdio))).toBe(true);
    expect(sameConnection(http, structuredClone(http))).toBe(true);
  });

  it("treats absent and empty args, env and cwd as the same", () => {
    const bare: StdioServerConfig = { id: "x", transport: "stdio", command: "node" };
    const empty: StdioServerConfig = { ...bare, args: [], env: {}, cwd: "" };
    expect(sameConnection(bare, empty)).toBe(true);
    expect(sameConnection(empty, bare)).toBe(true);
  });

  it("treats absent and empty headers as the same", () => {
    const { headers: _headers, ...bare } = http;
    expect(sameConnection(bare, { ...bare, headers: {} })).toBe(true);
    expect(sameConnection({ ...bare, headers: {} }, bare)).toBe(true);
  });

  it("does not count edits to label, slug, enabled, hiddenTools, alwaysLoad or timeouts", () => {
    const edited: StdioServerConfig = {
      ...stdio,
      label: "Git (edited)",
      slug: "git2",
      enabled: false,
      hiddenTools: ["git_reset"],
      alwaysLoad: ["git_status"],
      connectTimeoutMs: 1,
      callTimeoutMs: 2,
      probeTimeoutMs: 3,
      idleTimeoutMs: 4,
      maxResultChars: 5,
      trustAnnotations: true,
      coerceArguments: false,
      lazy: true,
    };
    expect(sameConnection(stdio, edited)).toBe(true);
    expect(sameConnection(http, { ...http, label: "Docs", callTimeoutMs: 10 })).toBe(true);
  });

  it("counts a change of transport", () => {
    const asHttp: HttpServerConfig = {
      id: "git",
      transport: "http",
      url: "http://localhost:1/mcp",
    };
    expect(sameConnection(stdio, asHttp)).toBe(false);
    expect(sameConnection(asHttp, stdio)).toBe(false);
  });

  it("counts a changed env value, an added env variable and a removed one", () => {
    expect(sameConnection(stdio, { ...stdio, env: { TOKEN: "b" } })).toBe(false);
    expect(sameConnection(stdio, { ...stdio, env: { TOKEN: "a", MORE: "1" } })).toBe(false);
    expect(sameConnection(stdio, { ...stdio, env: {} })).toBe(false);
  });

  it("counts a changed command, args, or cwd", () => {
    expect(sameConnection(stdio, { ...stdio, command: "npx" })).toBe(false);
    expect(sameConnection(stdio, { ...stdio, args: ["mcp-server-git", "-v"] })).toBe(false);
    expect(sameConnection(stdio, { ...stdio, args: [] })).toBe(false);
    expect(sameConnection(stdio, { ...stdio, cwd: "/srv/other" })).toBe(false);
  });

  it("counts a changed url or header value", () => {
    expect(sameConnection(http, { ...http, url: "https://mcp.example.com/v2" })).toBe(false);
    expect(sameConnection(http, { ...http, headers: { Authorization: "Bearer b" } })).toBe(false);
  });

  it("does not depend on the key order of env", () => {
    const a = { ...stdio, env: { A: "1", B: "2" } };
    const b = { ...stdio, env: { B: "2", A: "1" } };
    expect(sameConnection(a, b)).toBe(true);
  });
});
