import { describe, expect, it } from "vitest";
import { hostConfigPath, hostConfigPaths, serverMapPaths } from "../../src/cli/hosts/configs.js";
import { unifiedDiff } from "../../src/cli/hosts/unified-diff.js";
import { wiredEntry } from "../../src/cli/hosts/entries.js";
import { rewriteCodexServer } from "../../src/cli/hosts/toml-rewrite.js";

describe("unifiedDiff", () => {
  it("shows each change with three lines of context and correct hunk headers", () => {
    const before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n";
    const after = "a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\nL\nm\nn\n";
    expect(unifiedDiff(before, after, "old", "new")).toBe(
      [
        "--- old",
        "+++ new",
        "@@ -1,6 +1,6 @@",
        " a",
        " b",
        "-c",
        "+C",
        " d",
        " e",
        " f",
        "@@ -9,5 +9,6 @@",
        " i",
        " j",
        " k",
        "-l",
        "+L",
        " m",
        "+n",
        "",
      ].join("\n"),
    );
  });

  it("is empty for equal texts and marks removed, kept and added lines", () => {
    expect(unifiedDiff("x\n", "x\n", "a", "b")).toBe("");
    expect(unifiedDiff("a\nb\n", "b\nc\n", "x", "y")).toBe(
      "--- x\n+++ y\n@@ -1,2 +1,2 @@\n-a\n b\n+c\n",
    );
    expect(unifiedDiff("", "q\n", "a", "b")).toBe("--- a\n+++ b\n@@ -0,0 +1,1 @@\n+q\n");
  });
});

describe("host config locations", () => {
  const linux = { home: "/home/u", platform: "linux" as const, env: {} };
  const mac = { home: "/Users/u", platform: "darwin" as const, env: {} };

  it("finds each host's file on Linux and macOS", () => {
    expect(hostConfigPath("claude-desktop", linux)).toBe(
      "/home/u/.config/Claude/claude_desktop_config.json",
    );
    expect(hostConfigPath("claude-desktop", mac)).toBe(
      "/Users/u/Library/Application Support/Claude/claude_desktop_config.json",
    );
    expect(hostConfigPath("claude-code", linux)).toBe("/home/u/.claude.json");
    expect(hostConfigPath("cursor", mac)).toBe("/Users/u/.cursor/mcp.json");
    expect(hostConfigPath("vscode", linux)).toBe("/home/u/.config/Code/User/mcp.json");
    expect(hostConfigPath("vscode", mac)).toBe(
      "/Users/u/Library/Application Support/Code/User/mcp.json",
    );
    expect(hostConfigPath("vscode", { ...linux, env: { XDG_CONFIG_HOME: "/x" } })).toBe(
      "/x/Code/User/mcp.json",
    );
  });

  it("finds the other hosts' files on Linux and macOS, and honours CODEX_HOME and XDG_CONFIG_HOME", () => {
    expect(hostConfigPath("codex", linux)).toBe("/home/u/.codex/config.toml");
    expect(hostConfigPath("codex", { ...mac, env: { CODEX_HOME: "/opt/codex" } })).toBe(
      "/opt/codex/config.toml",
    );
    expect(hostConfigPath("gemini", mac)).toBe("/Users/u/.gemini/settings.json");
    expect(hostConfigPath("windsurf", linux)).toBe("/home/u/.codeium/windsurf/mcp_config.json");
    expect(hostConfigPaths("opencode", linux)).toEqual([
      "/home/u/.config/opencode/opencode.json",
      "/home/u/.config/opencode/opencode.jsonc",
    ]);
    expect(hostConfigPath("zed", mac)).toBe("/Users/u/.config/zed/settings.json");
    expect(hostConfigPath("zed", { ...linux, env: { XDG_CONFIG_HOME: "/x" } })).toBe(
      "/x/zed/settings.json",
    );
    expect(hostConfigPath("cline", mac)).toBe(
      "/Users/u/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    );
    expect(hostConfigPath("goose", mac)).toBe("/Users/u/.config/goose/config.yaml");
    expect(hostConfigPath("lm-studio", linux)).toBe("/home/u/.lmstudio/mcp.json");
  });

  it("finds the six CLIs' files, and honours each one's own variables", () => {
    expect(hostConfigPath("qwen", linux)).toBe("/home/u/.qwen/settings.json");
    expect(hostConfigPath("qwen", { ...linux, env: { QWEN_HOME: "/q" } })).toBe("/q/settings.json");
    expect(hostConfigPath("copilot", mac)).toBe("/Users/u/.copilot/mcp-config.json");
    expect(hostConfigPath("copilot", { ...linux, env: { COPILOT_HOME: "/c" } })).toBe(
      "/c/mcp-config.json",
    );
    expect(hostConfigPaths("kilo", { ...linux, env: { XDG_CONFIG_HOME: "/x" } })).toEqual([
      "/x/kilo/kilo.json",
      "/x/kilo/kilo.jsonc",
      "/x/kilo/config.json",
    ]);
    expect(hostConfigPath("continue", linux)).toBe("/home/u/.continue/config.yaml");
    expect(hostConfigPath("continue", { ...mac, env: { CONTINUE_GLOBAL_DIR: "/k" } })).toBe(
      "/k/config.yaml",
    );
    const cline = "settings/cline_mcp_settings.json";
    expect(hostConfigPath("cline-cli", linux)).toBe(`/home/u/.cline/data/${cline}`);
    expect(hostConfigPath("cline-cli", { ...linux, env: { CLINE_DIR: "/cd" } })).toBe(
      `/cd/data/${cline}`,
    );
    expect(
      hostConfigPath("cline-cli", { ...linux, env: { CLINE_DIR: "/cd", CLINE_DATA_DIR: "/dd" } }),
    ).toBe(`/dd/${cline}`);
    expect(
      hostConfigPath("cline-cli", { ...linux, env: { CLINE_MCP_SETTINGS_PATH: "/m/mcp.json" } }),
    ).toBe("/m/mcp.json");
    expect(hostConfigPath("augment", mac)).toBe("/Users/u/.augment/settings.json");
  });

  it("reads Continue's list of blocks, and nothing from a map where a list belongs", () => {
    expect(serverMapPaths("continue", { mcpServers: [{ name: "a", command: "x" }] })).toEqual([
      ["mcpServers"],
    ]);
    expect(serverMapPaths("continue", { mcpServers: { a: { command: "x" } } })).toEqual([]);
    expect(serverMapPaths("kilo", { mcp: { a: { type: "local" } } })).toEqual([["mcp"]]);
  });

  it("reads OpenCode's V2 servers under mcp.servers, and V1's straight under mcp", () => {
    expect(serverMapPaths("opencode", { mcp: { servers: { a: { type: "local" } } } })).toEqual([
      ["mcp", "servers"],
    ]);
    expect(
      serverMapPaths("opencode", { mcp: { servers: { type: "local", command: ["x"] } } }),
    ).toEqual([["mcp"]]);
  });

  it("finds Claude Code's user servers and each project's", () => {
    const root = {
      mcpServers: { a: {} },
      projects: { "/p/one": { mcpServers: { b: {} } }, "/p/two": { allowedTools: [] } },
    };
    expect(serverMapPaths("claude-code", root)).toEqual([
      ["mcpServers"],
      ["projects", "/p/one", "mcpServers"],
    ]);
    expect(serverMapPaths("vscode", { servers: {} })).toEqual([["servers"]]);
  });
});

describe("wiredEntry", () => {
  const command = ["/usr/bin/node", "/opt/mcpool/dist/cli/main.js"];

  it("replaces the connection with the bridge and keeps the host's own keys", () => {
    expect(
      wiredEntry(
        {
          command: "npx",
          args: ["-y", "x"],
          env: { A: "1" },
          autoApprove: ["read"],
          disabled: true,
        },
        "cursor",
        "files",
        command,
        undefined,
      ),
    ).toEqual({
      command: "/usr/bin/node",
      args: ["/opt/mcpool/dist/cli/main.js", "bridge", "--server", "files"],
      autoApprove: ["read"],
      disabled: true,
    });
  });

  it("names the transport for VS Code and passes a non-default socket on", () => {
    expect(
      wiredEntry(
        { type: "http", url: "https://x/mcp" },
        "vscode",
        "remote",
        command,
        "/run/s.sock",
      ),
    ).toEqual({
      type: "stdio",
      command: "/usr/bin/node",
      args: [
        "/opt/mcpool/dist/cli/main.js",
        "bridge",
        "--server",
        "remote",
        "--socket",
        "/run/s.sock",
      ],
    });
  });
});

describe("rewriteCodexServer", () => {
  const connection = new Set(["command", "args", "env", "cwd", "url", "http_headers"]);

  it("rewrites a table whose name is quoted, and only that table", () => {
    const text = [
      "# servers",
      '[mcp_servers."my server"]',
      'command = "npx" # starts it',
      'args = ["-y", "x"]',
      "enabled = true",
      "",
      "[mcp_servers.other]",
      'command = "other"',
      "",
    ].join("\n");
    const result = rewriteCodexServer(text, "my server", "/n", ["/m.js", "bridge"], connection);
    expect(result).toEqual({
      text: [
        "# servers",
        '[mcp_servers."my server"]',
        'command = "/n"',
        'args = ["/m.js", "bridge"]',
        "enabled = true",
        "",
        "[mcp_servers.other]",
        'command = "other"',
        "",
      ].join("\n"),
    });
  });

  it("refuses an entry written inline rather than as its own table", () => {
    const text = '[mcp_servers]\ndocs = { command = "npx", args = ["docs"] }\n';
    const result = rewriteCodexServer(text, "docs", "/n", ["/m.js"], connection);
    expect(result).toEqual({
      why: expect.stringMatching(/not written as a \[mcp_servers\.docs\] table/),
    });
  });
});
