/**
 * `mcpool unwire HOST --write` where wire's record (`<file>.mcpool-wired.json`) is gone — an
 * entry wired before wire kept one, or the record lost. An entry pointing at one server of the
 * pool gets its row's connection from mcpool's mcp.json, in the host's own spelling: a stdio
 * row's command, args, env and cwd; the file then means what it meant before wire.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { HostName } from "../../src/cli/hosts/configs.js";
import { runUnwire } from "../../src/cli/hosts/one-entry.js";
import { runWire } from "../../src/cli/hosts/wire.js";
import { wiredRecordPath } from "../../src/cli/hosts/wired-record.js";
import { wireHomes } from "../helpers/wire-home.js";

const FILES = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"];
const MEMORY = ["-y", "@modelcontextprotocol/server-memory"];

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
});
