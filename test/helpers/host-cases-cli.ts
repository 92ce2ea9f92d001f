/**
 * The six CLI hosts — the CLIs on npm with MCP configs — each file written the way
 * that host documents it (src/cli/hosts/configs.ts cites where each shape comes from), in the
 * layout such a file has: strict JSON, JSON with comments, one entry a line, YAML.
 */
import { WIRED_SOCKET, type HostCase } from "./host-cases.js";

const SSE = /SSE servers are not supported/;

const qwen: HostCase = {
  host: "qwen",
  file: { linux: ".qwen/settings.json", darwin: ".qwen/settings.json" },
  text: `{
  "general": { "vimMode": false },
  // Qwen Code reads Gemini CLI's mcpServers; strings may name $VARS.
  "mcpServers": {
    "sqlite": {
      "command": "uvx",
      "args": ["mcp-server-sqlite", "--db-path", "/srv/app.db"],
      "env": { "SQLITE_KEY": "$SQLITE_KEY" },
      "timeout": 30000,
      "trust": true
    },
    "docs": { "httpUrl": "https://docs.example.com/mcp" },
    "legacy": { "url": "https://legacy.example.com/sse" }
  }
}
`,
  imported: [
    [
      "sqlite",
      {
        command: "uvx",
        args: ["mcp-server-sqlite", "--db-path", "/srv/app.db"],
        env: { SQLITE_KEY: "${SQLITE_KEY}" },
      },
    ],
    ["docs", { type: "http", url: "https://docs.example.com/mcp" }],
  ],
  skipped: [["legacy", /SSE servers are not supported.*"httpUrl"/]],
  wired: [
    ["sqlite", "sqlite"],
    ["docs", "docs"],
  ],
  kept: { sqlite: { timeout: 30000, trust: true }, docs: {} },
  left: ["legacy"],
};

const copilot: HostCase = {
  host: "copilot",
  file: { linux: ".copilot/mcp-config.json", darwin: ".copilot/mcp-config.json" },
  text: `{
  "mcpServers": {
    "playwright": {
      "type": "local",
      "command": "npx",
      "args": [
        "@playwright/mcp@latest"
      ],
      "env": {},
      "tools": [
        "*"
      ]
    },
    "context7": {
      "type": "http",
      "url": "https://mcp.context7.com/mcp",
      "headers": {
        "CONTEXT7_API_KEY": "\${CONTEXT7_KEY}"
      },
      "tools": [
        "*"
      ]
    },
    "cloudflare": {
      "type": "sse",
      "url": "https://docs.mcp.cloudflare.com/sse",
      "tools": [
        "*"
      ]
    }
  }
}
`,
  imported: [
    ["playwright", { command: "npx", args: ["@playwright/mcp@latest"] }],
    [
      "context7",
      {
        type: "http",
        url: "https://mcp.context7.com/mcp",
        headers: { CONTEXT7_API_KEY: "${CONTEXT7_KEY}" },
      },
    ],
  ],
  skipped: [["cloudflare", SSE]],
  wired: [
    ["playwright", "playwright"],
    ["context7", "context7"],
  ],
  // A wired Copilot entry keeps its "local"; one that was remote becomes "stdio".
  kept: { playwright: { type: "local", tools: ["*"] }, context7: { type: "stdio", tools: ["*"] } },
  left: ["cloudflare"],
};

const kilo: HostCase = {
  host: "kilo",
  file: { linux: ".config/kilo/kilo.json", darwin: ".config/kilo/kilo.json" },
  text: `{
  "$schema": "https://app.kilo.ai/config.json",
  "mcp": {
    "my-local-server": {
      "type": "local",
      "command": ["npx", "-y", "my-mcp-command"],
      "enabled": true,
      "environment": { "API_KEY": "{env:MY_API_KEY}" }
    },
    "my-remote-server": {
      "type": "remote",
      "url": "https://my-mcp-server.com/mcp",
      "enabled": true,
      "headers": { "Authorization": "Bearer {env:MY_API_KEY}" }
    }
  }
}
`,
  imported: [
    [
      "my-local-server",
      { command: "npx", args: ["-y", "my-mcp-command"], env: { API_KEY: "${MY_API_KEY}" } },
    ],
    [
      "my-remote-server",
      {
        type: "http",
        url: "https://my-mcp-server.com/mcp",
        headers: { Authorization: "Bearer ${MY_API_KEY}" },
      },
    ],
  ],
  skipped: [],
  wired: [
    ["my-local-server", "my-local-server"],
    ["my-remote-server", "my-remote-server"],
  ],
  kept: { "my-local-server": { enabled: true }, "my-remote-server": { enabled: true } },
  left: [],
};

const CONTINUE_HEAD = `name: Local Config
version: 1.0.0
schema: v1
models:
  - name: Claude
    provider: anthropic
    model: claude-sonnet-4-5
    apiKey: \${{ secrets.ANTHROPIC_API_KEY }}
# The servers cn's agent may use
mcpServers:
  - name: SQLite MCP
`;
const CONTINUE_TAIL = `  - uses: linear/linear-mcp
  - name: Supabase
    command: npx
    args: ["-y", "@supabase/mcp-server-supabase"]
    env:
      SUPABASE_ACCESS_TOKEN: \${{ secrets.SUPABASE_TOKEN }}
`;

const continueCli: HostCase = {
  host: "continue",
  file: { linux: ".continue/config.yaml", darwin: ".continue/config.yaml" },
  text: `${CONTINUE_HEAD}    command: npx
    args:
      - "-y"
      - "mcp-sqlite"
      - "/srv/app.db"
    env:
      LOG_LEVEL: info
  - name: Remote docs
    type: streamable-http
    url: https://docs.example.com/mcp
    requestOptions:
      headers:
        X-Team: platform # sent with every request
${CONTINUE_TAIL}`,
  imported: [
    [
      "SQLite-MCP",
      {
        command: "npx",
        args: ["-y", "mcp-sqlite", "/srv/app.db"],
        env: { LOG_LEVEL: "info" },
        label: "SQLite MCP",
      },
    ],
    [
      "Remote-docs",
      {
        type: "http",
        url: "https://docs.example.com/mcp",
        headers: { "X-Team": "platform" },
        label: "Remote docs",
      },
    ],
  ],
  skipped: [
    ["#2", /a Continue Hub block/],
    ["Supabase", /only Continue resolves/],
  ],
  wired: [
    ["SQLite MCP", "SQLite-MCP"],
    ["Remote docs", "Remote-docs"],
  ],
  kept: {
    "SQLite MCP": { name: "SQLite MCP" },
    "Remote docs": { name: "Remote docs", type: "stdio" },
  },
  left: ["#2", "Supabase"],
  // The old args were double-quoted: so are the bridge's; the remote block gets plain ones.
  exact: ([node, main]) => `${CONTINUE_HEAD}    command: ${node}
    args:
      - "${main}"
      - "bridge"
      - "--server"
      - "SQLite-MCP"
      - "--socket"
      - "${WIRED_SOCKET}"
  - name: Remote docs
    type: stdio
    command: ${node}
    args:
      - ${main}
      - bridge
      - --server
      - Remote-docs
      - --socket
      - ${WIRED_SOCKET}
${CONTINUE_TAIL}`,
};

const clineCli: HostCase = {
  host: "cline-cli",
  file: {
    linux: ".cline/data/settings/cline_mcp_settings.json",
    darwin: ".cline/data/settings/cline_mcp_settings.json",
  },
  text: `{
  "mcpServers": {
    "git": { "command": "uvx", "args": ["mcp-server-git"], "disabled": false, "timeout": 60 },
    "remote": { "type": "streamableHttp", "url": "https://mcp.example.com/mcp", "disabled": false },
    "legacy": { "url": "https://mcp.example.com/sse", "disabled": false }
  }
}
`,
  imported: [
    ["git", { command: "uvx", args: ["mcp-server-git"] }],
    ["remote", { type: "http", url: "https://mcp.example.com/mcp" }],
  ],
  skipped: [["legacy", /Cline reads a url with no "type" as SSE/]],
  wired: [
    ["git", "git"],
    ["remote", "remote"],
  ],
  kept: { git: { disabled: false, timeout: 60 }, remote: { type: "stdio", disabled: false } },
  left: ["legacy"],
  // One entry a line before, one entry a line after.
  exact: ([node, main]) => `{
  "mcpServers": {
    "git": { "command": ${JSON.stringify(node)}, "args": ${JSON.stringify([main, "bridge", "--server", "git", "--socket", WIRED_SOCKET]).replaceAll(",", ", ")}, "disabled": false, "timeout": 60 },
    "remote": { "type": "stdio", "disabled": false, "command": ${JSON.stringify(node)}, "args": ${JSON.stringify([main, "bridge", "--server", "remote", "--socket", WIRED_SOCKET]).replaceAll(",", ", ")} },
    "legacy": { "url": "https://mcp.example.com/sse", "disabled": false }
  }
}
`,
};

const augment: HostCase = {
  host: "augment",
  file: { linux: ".augment/settings.json", darwin: ".augment/settings.json" },
  text: `{
  "model": "sonnet4.5",
  "mcpServers": {
    "context7": {
      "command": "npx",
      "args": ["-y", "@upstash/context7-mcp@latest"]
    },
    "linear": {
      "type": "http",
      "url": "https://mcp.linear.app/mcp"
    },
    "old": {
      "type": "sse",
      "url": "https://mcp.example.com/sse"
    }
  }
}
`,
  imported: [
    ["context7", { command: "npx", args: ["-y", "@upstash/context7-mcp@latest"] }],
    ["linear", { type: "http", url: "https://mcp.linear.app/mcp" }],
  ],
  skipped: [["old", SSE]],
  wired: [
    ["context7", "context7"],
    ["linear", "linear"],
  ],
  kept: { context7: {}, linear: { type: "stdio" } },
  left: ["old"],
};

export const CLI_HOST_CASES: HostCase[] = [qwen, copilot, kilo, continueCli, clineCli, augment];
