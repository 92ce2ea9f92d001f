/**
 * `mcpool unwire HOST --write` after `mcpool wire HOST --write` puts the host's file back as it
 * was, byte for byte, in each format wire writes (JSON, Codex's TOML, Continue's and Goose's
 * YAML): each entry's command, args, env, cwd and the host's own fields. An entry the user
 * changed since wire is left as it is and named; a second unwire changes nothing.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { HostName } from "../../src/cli/hosts/configs.js";
import { runUnwire } from "../../src/cli/hosts/one-entry.js";
import { runWire } from "../../src/cli/hosts/wire.js";
import { wireHome } from "../helpers/wire-home.js";

const FILES = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"];
const MEMORY = ["-y", "@modelcontextprotocol/server-memory"];

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

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A home with `host`'s file holding `text` and mcpool's mcp.json holding `servers`. */
const homeWith = (host: HostName, text: string, servers: Record<string, unknown>) =>
  wireHome(dirs, `mcpool-unwire-${host}-`, host, text, servers);

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
    const text = `name: Local Config
version: 1.0.0
schema: v1
mcpServers:
  - name: files
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    env:
      DEBUG: "1"
  - name: other
    command: other-server
`;
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

  describe("entries wired before wire kept its record: their rows' connections, from mcp.json", () => {
    /** Wires `text`, forgets the record (as a wire before it kept one did), unwires. */
    async function withoutRecord(host: HostName, text: string, servers: Record<string, unknown>) {
      const { file, run } = homeWith(host, text, servers);
      const wired = await run(runWire);
      expect(wired.code, wired.output).toBe(0);
      rmSync(`${file}.mcpool-wired.json`);
      const unwired = await run(runUnwire);
      expect(unwired.code, unwired.output).toBe(0);
      const again = await run(runUnwire);
      expect(again.output).toContain("nothing to unwire");
      return { output: unwired.output, after: readFileSync(file, "utf8") };
    }

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
      const text = `${CODEX_FILES}
[mcp_servers.other]
command = "other-server" # not mcpool's
`;
      const { output, after } = await withoutRecord("codex", text, {
        files: { command: "npx", args: FILES, env: { DEBUG: "1" } },
      });
      expect(output).toContain("back from mcp.json, with no record");
      expect(parseToml(after)).toEqual(parseToml(text));
      expect(after).toContain("# the files server\n[mcp_servers.files]\n");
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
      const { file, run } = homeWith("cursor", text, { memory: { command: "npx", args: MEMORY } });
      expect((await run(runWire)).code).toBe(0);
      rmSync(`${file}.mcpool-wired.json`);
      const wired = readFileSync(file, "utf8");
      writeFileSync(join(dirname(dirname(file)), "mcpool", "mcp.json"), '{ "mcpServers": {} }');
      const unwired = await run(runUnwire);
      expect(unwired.output).toContain(
        `memory (mcpool has no server "memory" to take its connection from)`,
      );
      expect(readFileSync(file, "utf8")).toBe(wired);
    });
  });

  it("says which file does not parse and changes nothing", async () => {
    const { file, run } = homeWith("codex", `[mcp_servers.files\ncommand = "npx"\n`, {});
    const result = await run(runUnwire);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain(`${file} does not parse`);
    expect(existsSync(`${file}.mcpool-wired.json`)).toBe(false);
  });
});
