/**
 * `mcpool unwire HOST --write` where wire's record (`<file>.mcpool-wired.json`) is gone — an
 * entry wired before wire kept one, or the record lost. An entry pointing at one server of the
 * pool gets its row's connection from mcpool's mcp.json, in the host's own spelling: a stdio
 * row's command, args, env and cwd, an http row's url and headers; the file then means what it
 * meant before wire. A pool-wide catalogue entry (`wire --catalog --one-entry`), ours by its
 * command, is taken out, every other byte of the file as it was.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { hostFormat, type HostName } from "../../src/cli/hosts/configs.js";
import { parseHostText } from "../../src/cli/hosts/files.js";
import { replacedPath, runUnwire, runWireOneEntry } from "../../src/cli/hosts/one-entry.js";
import { runWire } from "../../src/cli/hosts/wire.js";
import { wiredRecordPath } from "../../src/cli/hosts/wired-record.js";
import { FILES, MEMORY, wireHomes } from "../helpers/wire-home.js";

/** A home with `host`'s file holding `text` and mcpool's mcp.json holding `servers`. */
const homeWith = wireHomes("mcpool-unwire-");

/** Wires `text`, forgets the record (as a wire before it kept one did), unwires. */
async function withoutRecord(host: HostName, text: string, servers: Record<string, unknown>) {
  const { file, run } = homeWith(host, text, servers);
  const wired = await run(runWire);
  expect(wired.code, wired.output).toBe(0);
  expect(readFileSync(file, "utf8")).not.toBe(text);
  rmSync(wiredRecordPath(file));
  const unwired = await run(runUnwire);
  expect(unwired.code, unwired.output).toBe(0);
  const again = await run(runUnwire);
  expect(again.output).toContain("nothing to unwire");
  return { output: unwired.output, after: readFileSync(file, "utf8") };
}

/** What a host's file means, in its own format. */
function meaning(host: HostName, text: string): unknown {
  const parsed = parseHostText(hostFormat(host), text);
  if ("error" in parsed) throw new Error(`${host}'s file does not parse: ${parsed.error}`);
  return parsed.value;
}

describe("entries wired before wire kept its record: their rows' connections, from mcp.json", () => {
  it("JSON: each entry gets its row's command, args, env and cwd, its own fields kept, and says so", async () => {
    const text = `{
  // mine
  "mcpServers": {
    "files": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": { "DEBUG": "1" }, "cwd": "/tmp", "timeout": 30 },
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
    "other": { "command": "other-server" }
  }
}
`;
    const { output, after } = await withoutRecord("claude-code", text, {
      files: { command: "npx", args: FILES, env: { DEBUG: "1" }, cwd: "/tmp" },
      memory: { command: "npx", args: MEMORY },
    });
    expect(output).toContain("back from mcp.json, with no record");
    expect(output).toMatch(/: files, memory$/m);
    expect(parseJsonc(after)).toEqual(parseJsonc(text));
    expect(after).toContain("// mine");
  });

  it("TOML: each table gets its row's command, args and env; comments and other tables kept", async () => {
    const text = `# Codex
[mcp_servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
env = { DEBUG = "1" }
startup_timeout_sec = 20 # mine

[mcp_servers.other]
command = "other-server" # not mcpool's
`;
    const { output, after } = await withoutRecord("codex", text, {
      files: { command: "npx", args: FILES, env: { DEBUG: "1" } },
    });
    expect(output).toContain("back from mcp.json, with no record");
    expect(parseToml(after)).toEqual(parseToml(text));
    expect(after).toContain("# Codex\n[mcp_servers.files]\n");
    expect(after).toContain("startup_timeout_sec = 20 # mine");
    expect(after).toContain(`command = "other-server" # not mcpool's`);
  });

  it("YAML: Goose's extension gets its row's cmd, args and envs back", async () => {
    const text = `extensions:
  files:
    cmd: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    envs: { DEBUG: "1" }
    enabled: true
    name: files
    type: stdio
GOOSE_MODEL: gpt-5 # mine
`;
    const { output, after } = await withoutRecord("goose", text, {
      files: { command: "npx", args: FILES, env: { DEBUG: "1" } },
    });
    expect(output).toContain("back from mcp.json, with no record");
    expect(parseYaml(after)).toEqual(parseYaml(text));
    expect(after).toContain("GOOSE_MODEL: gpt-5 # mine");
  });

  it("leaves, naming it, an entry whose row mcpool no longer has", async () => {
    const text = `{ "mcpServers": { "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] } } }\n`;
    const { file, configPath, run } = homeWith("cursor", text, {
      memory: { command: "npx", args: MEMORY },
    });
    expect((await run(runWire)).code).toBe(0);
    rmSync(wiredRecordPath(file));
    const wired = readFileSync(file, "utf8");
    writeFileSync(configPath, '{ "mcpServers": {} }');
    const unwired = await run(runUnwire);
    expect(unwired.output).toContain(
      `memory (mcpool has no server "memory" to take its connection from)`,
    );
    expect(readFileSync(file, "utf8")).toBe(wired);
  });

  it("leaves, naming it, an entry whose host cannot say its row's connection", async () => {
    const text = `extensions:\n  files:\n    cmd: npx\n    args: [files]\n    type: stdio\n`;
    const { file, configPath, run } = homeWith("goose", text, {
      files: { command: "npx", args: ["files"] },
    });
    expect((await run(runWire)).code).toBe(0);
    rmSync(wiredRecordPath(file));
    const wired = readFileSync(file, "utf8");
    // The row now starts in a folder: Goose's extensions have no cwd to say it with.
    writeFileSync(
      configPath,
      JSON.stringify({ mcpServers: { files: { command: "npx", args: ["files"], cwd: "/srv" } } }),
    );
    const unwired = await run(runUnwire);
    expect(unwired.output).toContain(
      "files (goose's entry cannot say its row's command, args, env and cwd as mcp.json has them; put it back by hand)",
    );
    expect(readFileSync(file, "utf8")).toBe(wired);
  });
});

const REMOTE = "https://mcp.example.com/mcp";
const TEAM = { "X-Team": "platform" };
const HTTP_ROW = { type: "http", url: REMOTE, headers: TEAM };

/** An http server as each host spells it, with a key of the host's own, and its mcp.json row. */
const HTTP_CASES: { host: HostName; text: string; row?: Record<string, unknown> }[] = [
  {
    host: "claude-code",
    text: `{\n  "mcpServers": {\n    "remote": { "type": "http", "url": "${REMOTE}", "headers": { "X-Team": "platform" } }\n  }\n}\n`,
  },
  {
    host: "vscode",
    text: `{ "servers": { "remote": { "type": "http", "url": "${REMOTE}", "headers": { "X-Team": "platform" } } } }\n`,
  },
  {
    host: "gemini",
    text: `{ "mcpServers": { "remote": { "httpUrl": "${REMOTE}", "headers": { "X-Team": "platform" }, "trust": true } } }\n`,
  },
  {
    host: "windsurf",
    text: `{ "mcpServers": { "remote": { "serverUrl": "${REMOTE}", "headers": { "X-Team": "platform" }, "disabled": false } } }\n`,
  },
  {
    host: "opencode",
    text: `{ "mcp": { "remote": { "type": "remote", "url": "${REMOTE}", "headers": { "X-Team": "platform" }, "enabled": true } } }\n`,
  },
  {
    host: "cline",
    text: `{ "mcpServers": { "remote": { "type": "streamableHttp", "url": "${REMOTE}", "headers": { "X-Team": "platform" }, "disabled": false, "autoApprove": [] } } }\n`,
  },
  {
    host: "copilot",
    text: `{ "mcpServers": { "remote": { "type": "http", "url": "${REMOTE}", "headers": { "X-Team": "platform" }, "tools": ["*"] } } }\n`,
  },
  {
    host: "zed",
    text: `{ "context_servers": { "remote": { "url": "${REMOTE}", "headers": { "X-Team": "platform" } } } }\n`,
  },
  {
    host: "codex",
    text: `# Codex
[mcp_servers.remote]
url = "${REMOTE}"
bearer_token_env_var = "REMOTE_TOKEN"
tool_timeout_sec = 60 # mine

[mcp_servers.remote.http_headers]
X-Team = "platform"

[mcp_servers.remote.env_http_headers]
X-Key = "REMOTE_KEY"
`,
    row: {
      type: "http",
      url: REMOTE,
      headers: {
        ...TEAM,
        Authorization: "Bearer ${REMOTE_TOKEN}",
        "X-Key": "${REMOTE_KEY}",
      },
    },
  },
  {
    host: "goose",
    text: `extensions:
  remote:
    enabled: true
    name: remote
    type: streamable_http
    uri: ${REMOTE}
    headers:
      X-Team: platform
    timeout: 300
GOOSE_MODEL: gpt-5 # mine
`,
  },
  {
    host: "continue",
    text: `name: Local Config
version: 1.0.0
mcpServers:
  - name: remote
    type: streamable-http
    url: ${REMOTE}
    requestOptions:
      headers:
        X-Team: platform
`,
  },
];

describe("an http row's entry with no record gets its url and headers back", () => {
  for (const { host, text, row } of HTTP_CASES) {
    it(`${host} (${hostFormat(host)}): in ${host}'s own spelling, its own keys kept`, async () => {
      const { output, after } = await withoutRecord(host, text, { remote: row ?? HTTP_ROW });
      expect(output).toContain("back from mcp.json, with no record");
      expect(output).toMatch(/: remote$/m);
      expect(meaning(host, after)).toEqual(meaning(host, text));
    });
  }
});

/**
 * A file with the echo server's lines (`echo`) between `head` and `tail`, and the file once
 * the pool-wide entry that took their place is taken out: `head` and `tail` alone, unless said.
 */
const POOL_CASES: {
  host: HostName;
  label: string;
  head: string;
  echo: string;
  tail: string;
  without?: string;
}[] = [
  {
    host: "codex",
    label: "among other tables and comments",
    head: `model = "o3" # mine\n\n`,
    echo: `[mcp_servers.echo]\ncommand = "/usr/bin/node"\nargs = ["echo.mjs"]\n`,
    // The blank line after the table is the file's, as the one before it.
    tail: `\n# not mcpool's\n[mcp_servers.mine]\ncommand = "my-server"\n`,
  },
  {
    host: "codex",
    label: "the only server: no [mcp_servers] left",
    head: `model = "o3"\n\n`,
    echo: `[mcp_servers.echo]\ncommand = "/usr/bin/node"\nargs = ["echo.mjs"]\n`,
    tail: "",
  },
  {
    host: "goose",
    label: "among other extensions",
    head: "GOOSE_PROVIDER: openai\nextensions:\n",
    echo: "  echo:\n    cmd: /usr/bin/node\n    args: [echo.mjs]\n    name: echo\n    type: stdio\n",
    tail: "  mine:\n    cmd: my-server # not mcpool's\n    type: stdio\nGOOSE_MODEL: gpt-5 # after\n",
  },
  {
    host: "goose",
    label: "the only extension: extensions stays, empty",
    head: "extensions: # mine\n",
    echo: "  echo:\n    cmd: /usr/bin/node\n    args: [echo.mjs]\n    type: stdio\n",
    tail: "GOOSE_MODEL: gpt-5\n",
    without: "extensions: {} # mine\nGOOSE_MODEL: gpt-5\n",
  },
  {
    host: "continue",
    label: "among other blocks",
    head: "name: my assistant # Continue\nmcpServers:\n",
    echo: "  - name: echo\n    command: /usr/bin/node\n    args: [echo.mjs]\n",
    tail: "  - name: mine\n    command: my-server\nmodels: [] # after\n",
  },
  {
    host: "continue",
    label: "the only block: mcpServers stays, empty",
    head: "mcpServers:\n",
    echo: "  - name: echo\n    command: /usr/bin/node\n    args: [echo.mjs]\n",
    tail: "",
    without: "mcpServers: []\n",
  },
];

describe("a TOML or YAML file's pool-wide catalogue entry with no record is taken out", () => {
  for (const { host, label, head, echo, tail, without } of POOL_CASES) {
    it(`${host}, ${label}: ours by its command, every other byte as it was`, async () => {
      const { file, run } = homeWith(host, head + echo + tail, {
        echo: { command: "/usr/bin/node", args: ["echo.mjs"] },
      });
      const wired = await run(runWireOneEntry, true, { catalog: { mode: "on" }, oneEntry: true });
      expect(wired.code, wired.output).toBe(0);
      expect(wired.output).toContain("in place of echo");
      rmSync(wiredRecordPath(file));
      rmSync(replacedPath(file), { force: true });
      const unwired = await run(runUnwire);
      expect(unwired.code, unwired.output).toBe(0);
      expect(unwired.output).toContain("mcpool: the pool-wide catalogue entry goes");
      expect(readFileSync(file, "utf8")).toBe(without ?? head + tail);
      expect((await run(runUnwire)).output).toContain("nothing to unwire");
    });
  }
});
