import { describe, expect, it } from "vitest";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  configuredUrlProblem,
  expandPlaceholders,
  expandServerConfig,
  isAllowedRemoteUrl,
  McpPoolError,
  placeholderNames,
  remoteUrlProblem,
  sessionLost,
  unsetVariables,
  validateServerConfig,
  withoutEnvPlaceholders,
  type HttpServerConfig,
  type StdioServerConfig,
} from "../../src/index.js";
import { redactPoolError, redactSecrets, secretValues } from "../../src/pool/core/secrets.js";

describe("expandPlaceholders", () => {
  const env = { HOME: "/home/ada", EMPTY: "", TOKEN: "t0k" };

  it("fills ${VAR} and ${env:VAR} from the environment given", () => {
    expect(expandPlaceholders("${HOME}/bin and ${env:TOKEN}", env)).toBe("/home/ada/bin and t0k");
  });

  it("gives :-default the shell's meaning: used when the variable is unset or empty", () => {
    expect(expandPlaceholders("${NOPE:-fallback}", env)).toBe("fallback");
    expect(expandPlaceholders("${EMPTY:-fallback}", env)).toBe("fallback");
    expect(expandPlaceholders("${TOKEN:-fallback}", env)).toBe("t0k");
    expect(expandPlaceholders("${env:NOPE:-x}", env)).toBe("x");
    expect(expandPlaceholders("${NOPE:-}", env)).toBe("");
  });

  it("expands a set-but-empty variable without a default to the empty string", () => {
    expect(expandPlaceholders("[${EMPTY}]", env)).toBe("[]");
  });

  it("leaves an unset variable without a default verbatim and names it", () => {
    const unset: string[] = [];
    expect(expandPlaceholders("a ${MISSING} b ${TOKEN}", env, (name) => unset.push(name))).toBe(
      "a ${MISSING} b t0k",
    );
    expect(unset).toEqual(["MISSING"]);
  });

  it("leaves what is not its syntax alone: $VAR, ${input:x}, ${workspaceFolder:x}, ${1BAD}", () => {
    for (const text of [
      "$TOKEN",
      "${input:api-key}",
      "${workspaceFolder:repo}",
      "${1BAD}",
      "${}",
    ]) {
      expect(expandPlaceholders(text, env)).toBe(text);
    }
    expect(placeholderNames("${A} ${env:B} ${A:-x} ${input:C}")).toEqual(["A", "B"]);
  });

  it("reads process.env when no environment is given", () => {
    process.env.MCPOOL_PLACEHOLDER_TEST = "from-process";
    try {
      expect(expandPlaceholders("${MCPOOL_PLACEHOLDER_TEST}")).toBe("from-process");
    } finally {
      delete process.env.MCPOOL_PLACEHOLDER_TEST;
    }
  });
});

describe("expandServerConfig", () => {
  const env = { BIN: "/opt/bin", KEY: "sk-123", DIR: "/srv", HOST: "127.0.0.1:9000" };

  it("expands command, args, env values and cwd of a stdio row, and leaves the row alone", () => {
    const row: StdioServerConfig = {
      id: "s",
      transport: "stdio",
      command: "${BIN}/server",
      args: ["--key", "${KEY}", "${NOPE:-d}"],
      env: { API_KEY: "${KEY}", "${KEY}": "keys are not expanded" },
      cwd: "${DIR}/work",
      label: "${KEY} labels are not connection fields",
    };
    const copy = structuredClone(row);
    expect(expandServerConfig(row, env)).toEqual({
      ...row,
      command: "/opt/bin/server",
      args: ["--key", "sk-123", "d"],
      env: { API_KEY: "sk-123", "${KEY}": "keys are not expanded" },
      cwd: "/srv/work",
    });
    expect(row).toEqual(copy);
  });

  it("expands url and header values of an http row", () => {
    const row: HttpServerConfig = {
      id: "h",
      transport: "http",
      url: "http://${HOST}/mcp?key=${KEY}",
      headers: { Authorization: "Bearer ${KEY}" },
    };
    expect(expandServerConfig(row, env)).toEqual({
      ...row,
      url: "http://127.0.0.1:9000/mcp?key=sk-123",
      headers: { Authorization: "Bearer sk-123" },
    });
  });

  it("lists the variables a row needs that are unset and have no default, each once", () => {
    const row: StdioServerConfig = {
      id: "s",
      transport: "stdio",
      command: "${A}",
      args: ["${B}", "${A}", "${C:-ok}"],
      env: { X: "${KEY}" },
    };
    expect(unsetVariables(row, env)).toEqual(["A", "B"]);
  });
});

describe("withoutEnvPlaceholders", () => {
  it("resolves every placeholder now to its default or to nothing, reading no environment", () => {
    process.env.MCPOOL_SHOULD_NOT_BE_READ = "secret";
    try {
      const row: HttpServerConfig = {
        id: "h",
        transport: "http",
        url: "https://${MCPOOL_SHOULD_NOT_BE_READ:-mcp.example.com}/mcp",
        headers: {
          Authorization: "Bearer ${MCPOOL_SHOULD_NOT_BE_READ}",
          Nested: "${A:-${MCPOOL_SHOULD_NOT_BE_READ}}",
        },
      };
      const stripped = withoutEnvPlaceholders(row);
      expect(stripped).toEqual({
        ...row,
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: "Bearer ", Nested: "" },
      });
      expect(JSON.stringify(expandServerConfig(stripped))).not.toContain("secret");
    } finally {
      delete process.env.MCPOOL_SHOULD_NOT_BE_READ;
    }
  });
});

describe("the remote URL policy", () => {
  it("allows https anywhere and http only to loopback", () => {
    expect(isAllowedRemoteUrl(new URL("https://mcp.example.com/x"))).toBe(true);
    expect(isAllowedRemoteUrl(new URL("http://127.0.0.9:1/x"))).toBe(true);
    expect(isAllowedRemoteUrl(new URL("http://[::1]:1/x"))).toBe(true);
    expect(isAllowedRemoteUrl(new URL("http://localhost/x"))).toBe(true);
    expect(isAllowedRemoteUrl(new URL("http://10.0.0.1/x"))).toBe(false);
    expect(isAllowedRemoteUrl(new URL("ftp://127.0.0.1/x"))).toBe(false);
    expect(remoteUrlProblem("http://evil.example/mcp?token=abc")).toBe(
      "`url` uses plain http to evil.example; http is allowed only to loopback (localhost, 127.0.0.0/8, ::1); use https",
    );
  });

  it("accepts at validation a url whose host or whole value is a placeholder, and checks the rest", () => {
    const http = (url: string) => validateServerConfig({ id: "h", transport: "http", url });
    expect(http("http://${MCP_HOST}/mcp")).toEqual([]);
    expect(http("https://${MCP_HOST:-mcp.example.com}:8443/mcp")).toEqual([]);
    expect(http("${MCP_URL}")).toEqual([]);
    expect(http("https://mcp.example.com/${TENANT}/mcp?key=${KEY}")).toEqual([]);
    // A literal host is still held to the policy, whatever the path holds.
    expect(http("http://mcp.example.com/${TENANT}")[0]).toMatch(/plain http to mcp\.example\.com/);
    expect(configuredUrlProblem("ftp://${HOST}/x")).toBe('`url` must use http or https, got "ftp"');
  });
});

describe("sessionLost", () => {
  it("is a Streamable HTTP 404 or 400, and nothing else", () => {
    expect(sessionLost(new StreamableHTTPError(404, "Session not found"))).toBe(true);
    expect(sessionLost(new StreamableHTTPError(400, "Mcp-Session-Id header is required"))).toBe(
      true,
    );
    expect(sessionLost(new StreamableHTTPError(401, "Unauthorized"))).toBe(false);
    expect(sessionLost(new StreamableHTTPError(500, "boom"))).toBe(false);
    expect(sessionLost(new McpError(ErrorCode.ConnectionClosed, "closed"))).toBe(false);
    expect(sessionLost(Object.assign(new Error("404"), { code: 404 }))).toBe(false);
    expect(sessionLost(undefined)).toBe(false);
  });
});

describe("redaction of a row's secrets", () => {
  const row: HttpServerConfig = {
    id: "h",
    transport: "http",
    url: "https://mcp.example.com",
    headers: { Authorization: "Bearer ${TOKEN}", "X-Key": "key-1234567", Short: "1" },
  };

  it("knows the written and the expanded values, and the token of a Bearer header", () => {
    const secrets = secretValues(row, { TOKEN: "tok-abcdef" });
    expect(secrets).toEqual(
      expect.arrayContaining(["Bearer ${TOKEN}", "Bearer tok-abcdef", "tok-abcdef", "key-1234567"]),
    );
    expect(secrets).not.toContain("1");
    expect(redactSecrets("401: bad token tok-abcdef for key-1234567", secrets)).toBe(
      "401: bad token [redacted] for [redacted]",
    );
  });

  it("cleans a pool error's message and details, and leaves a clean one as it is", () => {
    const secrets = secretValues(row, { TOKEN: "tok-abcdef" });
    const dirty = new McpPoolError("connect-failed", "failed: tok-abcdef", {
      serverId: "h",
      stderr: "key-1234567 rejected",
    });
    const clean = redactPoolError(dirty, secrets);
    expect(clean.message).toBe("failed: [redacted]");
    expect(clean.detail).toEqual({ serverId: "h", stderr: "[redacted] rejected" });
    expect(clean.code).toBe("connect-failed");
    const fine = new McpPoolError("timeout", "slow", { serverId: "h" });
    expect(redactPoolError(fine, secrets)).toBe(fine);
  });
});
