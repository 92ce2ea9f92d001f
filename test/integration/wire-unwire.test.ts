/**
 * `mcpool unwire HOST --write` after `mcpool wire HOST --write` puts the host's file back as it
 * was, byte for byte, in each format wire writes (JSON, Codex's TOML, Continue's and Goose's
 * YAML): each entry's command, args, env, cwd and the host's own fields. An entry the user
 * changed since wire is left as it is and named; a second unwire changes nothing.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { HostName } from "../../src/cli/hosts/configs.js";
import { runUnwire } from "../../src/cli/hosts/one-entry.js";
import { runWire } from "../../src/cli/hosts/wire.js";
import { continueFile, FILES, MEMORY, wireHomes } from "../helpers/wire-home.js";

/** Codex's files server: a comment, a key of Codex's own, an env table. */
const CODEX_FILES = `model = "o3"

# the files server
[mcp_servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
startup_timeout_sec = 20

[mcp_servers.files.env]
DEBUG = "1"
`;

/** A home with `host`'s file holding `text` and mcpool's mcp.json holding `servers`. */
const homeWith = wireHomes("mcpool-unwire-");

/** Wires `text`, checks it changed, unwires it: the file after unwire. */
async function roundTrip(host: HostName, text: string, servers: Record<string, unknown>) {
  const { file, run } = homeWith(host, text, servers);
  const wired = await run(runWire);
  expect(wired.code, wired.output).toBe(0);
  const wiredText = readFileSync(file, "utf8");
  expect(wiredText).not.toBe(text);
  const dry = await run(runUnwire, false);
  expect(dry.code, dry.output).toBe(0);
  expect(dry.output).toContain("dry run");
  expect(dry.output).toContain(`--- ${file}\n+++ ${file} (unwired)\n`);
  expect(readFileSync(file, "utf8")).toBe(wiredText);
  const unwired = await run(runUnwire);
  expect(unwired.code, unwired.output).toBe(0);
  const again = await run(runUnwire);
  expect(again.output).toContain("nothing to unwire");
  return readFileSync(file, "utf8");
}

describe("unwire puts back what wire changed", () => {
  it("restores Claude Code's JSON byte for byte: env, cwd, type and its own fields", async () => {
    const text = `{
  "numStartups": 12,
  "mcpServers": {
    "files": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
      "env": { "DEBUG": "1" },
      "cwd": "/tmp"
    },
    "memory": {"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]},
    "other": { "command": "other-server" }
  },
  "projects": {
    "/home/me/app": {
      "mcpServers": {
        "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": { "DEBUG": "1" }, "cwd": "/tmp" }
      }
    }
  }
}
`;
    const after = await roundTrip("claude-code", text, {
      files: { command: "npx", args: FILES, env: { DEBUG: "1" }, cwd: "/tmp" },
      memory: { command: "npx", args: MEMORY },
    });
    expect(after).toBe(text);
  });

  it("restores Codex's TOML byte for byte, its env table and comments", async () => {
    const text = `${CODEX_FILES}
[mcp_servers.memory]
command = "npx"
args = [
  "-y",
  "@modelcontextprotocol/server-memory",
]
`;
    const after = await roundTrip("codex", text, {
      files: { command: "npx", args: FILES, env: { DEBUG: "1" } },
      memory: { command: "npx", args: MEMORY },
    });
    expect(after).toBe(text);
  });

  it("restores Continue's YAML byte for byte", async () => {
    const text = continueFile(undefined, undefined, `    env:\n      DEBUG: "1"\n`);
    const after = await roundTrip("continue", text, {
      files: { command: "npx", args: FILES, env: { DEBUG: "1" } },
    });
    expect(after).toBe(text);
  });

  it("restores Goose's YAML byte for byte", async () => {
    const text = `GOOSE_PROVIDER: openai
extensions:
  memory:
    name: memory
    type: stdio
    cmd: npx
    args:
      - -y
      - "@modelcontextprotocol/server-memory"
    envs:
      DEBUG: "1"
    enabled: true
    timeout: 300
`;
    const after = await roundTrip("goose", text, {
      memory: { command: "npx", args: MEMORY, env: { DEBUG: "1" } },
    });
    expect(after).toBe(text);
  });

  it("leaves an entry edited since wire as it is, names it, and puts back the others", async () => {
    const text = `{
  "mcpServers": {
    "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] },
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] }
  }
}
`;
    const { file, run } = homeWith("cursor", text, {
      files: { command: "npx", args: FILES },
      memory: { command: "npx", args: MEMORY },
    });
    expect((await run(runWire)).code).toBe(0);
    const wired = readFileSync(file, "utf8");
    // The user adds a flag to the wired memory entry, and a server of their own.
    const edited = wired
      .replace(`"--server", "memory"`, `"--server", "memory", "--verbose"`)
      .replace(`"mcpServers": {`, `"mcpServers": {\n    "mine": { "command": "my-server" },`);
    expect(edited).not.toBe(wired);
    writeFileSync(file, edited);
    const unwired = await run(runUnwire);
    expect(unwired.code, unwired.output).toBe(0);
    expect(unwired.output).toMatch(/memory.*changed since wire/);
    const after = readFileSync(file, "utf8");
    expect(after).toContain(
      `"files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }`,
    );
    expect(after).toContain(`"--server", "memory", "--verbose"`);
    expect(after).toContain(`"mine": { "command": "my-server" },`);
    // A second unwire leaves the edited entry as it is again, and says so.
    const again = await run(runUnwire);
    expect(again.output).toMatch(/memory.*changed since wire/);
    expect(readFileSync(file, "utf8")).toBe(after);
  });

  it("says which file does not parse and changes nothing", async () => {
    const { file, run } = homeWith("codex", `[mcp_servers.files\ncommand = "npx"\n`, {});
    const result = await run(runUnwire);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain(`${file} does not parse`);
    expect(existsSync(`${file}.mcpool-wired.json`)).toBe(false);
  });
});
