/**
 * One config per host beyond the first four, written the way that host writes it — the
 * shapes, keys and comments of each host's own documentation (cited in the README's host
 * table) — with what `mcpool import` must make of it and what `mcpool wire` must leave.
 */
import type { HostName } from "../../src/cli/hosts/configs.js";
import { CLI_HOST_CASES } from "./host-cases-cli.js";

/** The daemon socket wire is given in these cases; every wired entry names it. */
export const WIRED_SOCKET = "/run/user/1000/mcpool/mcpool.sock";

export interface HostCase {
  host: HostName;
  /** The file, relative to HOME, on each platform. */
  file: { linux: string; darwin: string };
  text: string;
  /** `[id, mcp.json body]` for each server import adds, in order. */
  imported: [string, Record<string, unknown>][];
  /** `[name, why]` for each entry import cannot make a row of. */
  skipped: [string, RegExp][];
  /** `[name, server id]` for each entry wire rewrites. */
  wired: [string, string][];
  /** The keys a wired entry keeps besides the bridge's, by name. */
  kept: Record<string, Record<string, unknown>>;
  /** Entries wire leaves as they are. */
  left: string[];
  /** The whole file after wire, for the formats rewritten by text (TOML, YAML). */
  exact?: (bridge: readonly [string, string]) => string;
}

const SSE = /SSE servers are not supported/;

const CODEX_HEAD = `# Codex reads this file at start; \`codex mcp add\` writes the tables below.
model = "gpt-5-codex"
approval_policy = "on-request"

# Documentation lookups, started by Codex itself.
[mcp_servers.docs]
`;
const CODEX_TAIL = `[profiles.fast]
model = "o4-mini" # a cheaper model for quick questions
`;

const codex: HostCase = {
  host: "codex",
  file: { linux: ".codex/config.toml", darwin: ".codex/config.toml" },
  text: `${CODEX_HEAD}command = "npx"
args = [
  "-y",
  "@acme/docs-mcp",
]
cwd = "/srv/docs"
startup_timeout_sec = 20 # the first start downloads the package

[mcp_servers.docs.env]
DOCS_TOKEN = "\${DOCS_TOKEN}"

[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
bearer_token_env_var = "LINEAR_API_KEY"
tool_timeout_sec = 60

${CODEX_TAIL}`,
  imported: [
    [
      "docs",
      {
        command: "npx",
        args: ["-y", "@acme/docs-mcp"],
        env: { DOCS_TOKEN: "${DOCS_TOKEN}" },
        cwd: "/srv/docs",
      },
    ],
    [
      "linear",
      {
        type: "http",
        url: "https://mcp.linear.app/mcp",
        headers: { Authorization: "Bearer ${LINEAR_API_KEY}" },
      },
    ],
  ],
  skipped: [],
  wired: [
    ["docs", "docs"],
    ["linear", "linear"],
  ],
  kept: { docs: { startup_timeout_sec: 20 }, linear: { tool_timeout_sec: 60 } },
  left: [],
  // The table's args were an item a line, with a trailing comma: so are the bridge's.
  exact: ([node, main]) => `${CODEX_HEAD}command = "${node}"
args = [
  "${main}",
  "bridge",
  "--server",
  "docs",
  "--socket",
  "${WIRED_SOCKET}",
]
startup_timeout_sec = 20 # the first start downloads the package

[mcp_servers.linear]
command = "${node}"
args = ["${main}", "bridge", "--server", "linear", "--socket", "${WIRED_SOCKET}"]
tool_timeout_sec = 60

${CODEX_TAIL}`,
};

const gemini: HostCase = {
  host: "gemini",
  file: { linux: ".gemini/settings.json", darwin: ".gemini/settings.json" },
  text: `{
  "theme": "GitHub",
  // Servers Gemini CLI starts; strings may name $VARS.
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server", "--port", "8080"],
      "cwd": "/srv/python-tools",
      "env": { "DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "\${EXTERNAL_API_KEY}" },
      "timeout": 15000,
      "trust": false
    },
    "httpServer": {
      "httpUrl": "https://api.example.com/mcp",
      "headers": { "Authorization": "Bearer $API_TOKEN" },
      "timeout": 5000
    },
    "sseServer": { "url": "https://api.example.com/sse" }
  }
}
`,
  imported: [
    [
      "pythonTools",
      {
        command: "python",
        args: ["-m", "my_mcp_server", "--port", "8080"],
        env: { DATABASE_URL: "${DB_CONNECTION_STRING}", API_KEY: "${EXTERNAL_API_KEY}" },
        cwd: "/srv/python-tools",
      },
    ],
    [
      "httpServer",
      {
        type: "http",
        url: "https://api.example.com/mcp",
        headers: { Authorization: "Bearer ${API_TOKEN}" },
      },
    ],
  ],
  skipped: [["sseServer", /SSE servers are not supported.*"httpUrl"/]],
  wired: [
    ["pythonTools", "pythonTools"],
    ["httpServer", "httpServer"],
  ],
  kept: { pythonTools: { timeout: 15000, trust: false }, httpServer: { timeout: 5000 } },
  left: ["sseServer"],
};

const windsurf: HostCase = {
  host: "windsurf",
  file: {
    linux: ".codeium/windsurf/mcp_config.json",
    darwin: ".codeium/windsurf/mcp_config.json",
  },
  text: `{
  "mcpServers": {
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "\${GITHUB_PAT}" },
      "disabled": false
    },
    "github-remote": {
      "serverUrl": "https://api.githubcopilot.com/mcp/",
      "headers": { "Authorization": "Bearer \${GITHUB_PAT}" }
    }
  }
}
`,
  imported: [
    [
      "github",
      {
        command: "docker",
        args: [
          "run",
          "-i",
          "--rm",
          "-e",
          "GITHUB_PERSONAL_ACCESS_TOKEN",
          "ghcr.io/github/github-mcp-server",
        ],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_PAT}" },
      },
    ],
    [
      "github-remote",
      {
        type: "http",
        url: "https://api.githubcopilot.com/mcp/",
        headers: { Authorization: "Bearer ${GITHUB_PAT}" },
      },
    ],
  ],
  skipped: [],
  wired: [
    ["github", "github"],
    ["github-remote", "github-remote"],
  ],
  kept: { github: { disabled: false }, "github-remote": {} },
  left: [],
};

const opencode: HostCase = {
  host: "opencode",
  file: {
    linux: ".config/opencode/opencode.jsonc",
    darwin: ".config/opencode/opencode.jsonc",
  },
  text: `{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "mcp_everything": {
      "type": "local",
      // Or ["bun", "x", "my-mcp-command"]
      "command": ["npx", "-y", "@modelcontextprotocol/server-everything"],
      "enabled": true,
      "environment": { "MY_ENV_VAR": "{env:MY_ENV_VAR}" },
    },
    "jira": {
      "type": "remote",
      "url": "https://jira.example.com/mcp",
      "enabled": false,
      "headers": { "Authorization": "Bearer {env:JIRA_TOKEN}" },
    },
  },
}
`,
  imported: [
    [
      "mcp_everything",
      {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-everything"],
        env: { MY_ENV_VAR: "${MY_ENV_VAR}" },
      },
    ],
    [
      "jira",
      {
        type: "http",
        url: "https://jira.example.com/mcp",
        headers: { Authorization: "Bearer ${JIRA_TOKEN}" },
        disabled: true,
      },
    ],
  ],
  skipped: [],
  wired: [["mcp_everything", "mcp_everything"]],
  kept: { mcp_everything: { enabled: true } },
  // Switched off in OpenCode, so switched off in mcpool: nothing warm to share.
  left: ["jira"],
};

const zed: HostCase = {
  host: "zed",
  file: { linux: ".config/zed/settings.json", darwin: ".config/zed/settings.json" },
  text: `// Zed settings
//
// For information on how to configure Zed, see the Zed documentation.
{
  "theme": "One Dark",
  "buffer_font_size": 15,
  "context_servers": {
    "your-mcp-server": {
      "source": "custom",
      "command": "some-command",
      "args": ["arg-1", "arg-2"],
      "env": {}
    },
    // The older shape: the process nested under "command".
    "postgres": {
      "command": {
        "path": "npx",
        "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/db"],
        "env": null
      },
      "settings": {}
    },
    "mcp-server-github": {
      "source": "extension",
      "enabled": true,
      "settings": { "github_personal_access_token": "\${GITHUB_TOKEN}" }
    }
  }
}
`,
  imported: [
    ["your-mcp-server", { command: "some-command", args: ["arg-1", "arg-2"] }],
    [
      "postgres",
      {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/db"],
      },
    ],
  ],
  skipped: [["mcp-server-github", /a Zed extension's server/]],
  wired: [
    ["your-mcp-server", "your-mcp-server"],
    ["postgres", "postgres"],
  ],
  kept: { "your-mcp-server": { source: "custom" }, postgres: { settings: {} } },
  left: ["mcp-server-github"],
};

const CLINE = "globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json";

const cline: HostCase = {
  host: "cline",
  file: {
    linux: `.config/Code/User/${CLINE}`,
    darwin: `Library/Application Support/Code/User/${CLINE}`,
  },
  text: `{
  "mcpServers": {
    "git": {
      "command": "uvx",
      "args": ["mcp-server-git", "--repository", "/home/ada/src/app"],
      "disabled": false,
      "autoApprove": ["git_status"],
      "networkTimeout": 60000
    },
    "remote": {
      "type": "streamableHttp",
      "url": "https://mcp.example.com/mcp",
      "disabled": false,
      "autoApprove": []
    },
    "legacy": {
      "url": "https://mcp.example.com/sse",
      "disabled": false,
      "autoApprove": []
    }
  }
}
`,
  imported: [
    ["git", { command: "uvx", args: ["mcp-server-git", "--repository", "/home/ada/src/app"] }],
    ["remote", { type: "http", url: "https://mcp.example.com/mcp" }],
  ],
  skipped: [["legacy", /Cline reads a url with no "type" as SSE/]],
  wired: [
    ["git", "git"],
    ["remote", "remote"],
  ],
  kept: {
    git: { disabled: false, autoApprove: ["git_status"], networkTimeout: 60000 },
    remote: { type: "stdio", disabled: false, autoApprove: [] },
  },
  left: ["legacy"],
};

const GOOSE_HEAD = `# goose configure writes this file; comments survive mcpool wire.
GOOSE_PROVIDER: anthropic
GOOSE_MODEL: claude-sonnet-4-5
extensions:
  developer:
    bundled: true
    display_name: Developer
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  # GitHub's own server; the token is in the keyring
  github:
    `;
const GOOSE_TAIL = `  old-sse:
    enabled: false
    name: old-sse
    type: sse
    uri: https://mcp.example.com/sse
GOOSE_MODE: smart_approve
`;

const goose: HostCase = {
  host: "goose",
  file: { linux: ".config/goose/config.yaml", darwin: ".config/goose/config.yaml" },
  text: `${GOOSE_HEAD}args:
    - -y
    - '@modelcontextprotocol/server-github'
    bundled: null
    cmd: npx
    description: GitHub issues and pull requests
    enabled: true
    env_keys:
    - GITHUB_PERSONAL_ACCESS_TOKEN
    envs: {}
    name: github
    timeout: 300
    type: stdio
  remote:
    enabled: true
    headers:
      X-Team: platform # sent with every request
    name: remote
    timeout: 300
    type: streamable_http
    uri: https://mcp.example.com/mcp
${GOOSE_TAIL}`,
  imported: [
    [
      "github",
      {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_PERSONAL_ACCESS_TOKEN}" },
      },
    ],
    [
      "remote",
      { type: "http", url: "https://mcp.example.com/mcp", headers: { "X-Team": "platform" } },
    ],
  ],
  skipped: [
    ["developer", /a Goose builtin extension/],
    ["old-sse", SSE],
  ],
  wired: [
    ["github", "github"],
    ["remote", "remote"],
  ],
  kept: {
    github: {
      bundled: null,
      description: "GitHub issues and pull requests",
      enabled: true,
      name: "github",
      timeout: 300,
    },
    remote: { enabled: true, name: "remote", timeout: 300 },
  },
  left: ["developer", "old-sse"],
  exact: ([node, main]) => `${GOOSE_HEAD}args:
    - ${main}
    - bridge
    - --server
    - github
    - --socket
    - ${WIRED_SOCKET}
    bundled: null
    cmd: ${node}
    description: GitHub issues and pull requests
    enabled: true
    name: github
    timeout: 300
    type: stdio
  remote:
    enabled: true
    name: remote
    timeout: 300
    type: stdio
    cmd: ${node}
    args:
    - ${main}
    - bridge
    - --server
    - remote
    - --socket
    - ${WIRED_SOCKET}
${GOOSE_TAIL}`,
};

const lmStudio: HostCase = {
  host: "lm-studio",
  file: { linux: ".lmstudio/mcp.json", darwin: ".lmstudio/mcp.json" },
  text: `{
  "mcpServers": {
    "hf-mcp-server": {
      "url": "https://huggingface.co/mcp",
      "headers": { "Authorization": "Bearer \${HF_TOKEN}" }
    },
    "time": { "command": "uvx", "args": ["mcp-server-time"] }
  }
}
`,
  imported: [
    [
      "hf-mcp-server",
      {
        type: "http",
        url: "https://huggingface.co/mcp",
        headers: { Authorization: "Bearer ${HF_TOKEN}" },
      },
    ],
    ["time", { command: "uvx", args: ["mcp-server-time"] }],
  ],
  skipped: [],
  wired: [
    ["hf-mcp-server", "hf-mcp-server"],
    ["time", "time"],
  ],
  kept: { "hf-mcp-server": {}, time: {} },
  left: [],
};

export const HOST_CASES: HostCase[] = [
  codex,
  gemini,
  windsurf,
  opencode,
  zed,
  cline,
  goose,
  lmStudio,
  ...CLI_HOST_CASES,
];
