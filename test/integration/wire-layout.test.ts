/**
 * `mcpool wire --write` keeps each file's own layout. A one-line file stays one
 * line (compact or spaced), a pretty-printed one keeps its arrays an item a line, a
 * tab-indented one its tabs, OpenCode's JSONC its one-line command arrays, comments and
 * trailing commas, a YAML flow sequence stays flow and a TOML array an item a line — every
 * byte but the wired keys' as it was. A second wire finds nothing to do and changes nothing.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { HostName } from "../../src/cli/hosts/configs.js";
import { planImport, writeImport } from "../../src/cli/hosts/import.js";
import { runWire } from "../../src/cli/hosts/wire.js";
import { continueFile, FILES, MAIN, NODE, SOCKET, wireHomes } from "../helpers/wire-home.js";

const bridge = (id: string) => [MAIN, "bridge", "--server", id, "--socket", SOCKET];

const homeWith = wireHomes("mcpool-layout-");

/** Wires `host`'s file holding `text` against mcpool's `servers`: the file after, twice. */
async function wireTwice(
  host: HostName,
  text: string,
  servers: Record<string, unknown>,
): Promise<{ after: string; again: string; output: string }> {
  const { file, run } = homeWith(host, text, servers);
  const wire = async () => {
    const { code, output } = await run(runWire);
    expect(code, output).toBe(0);
    return output;
  };
  const output = await wire();
  const after = readFileSync(file, "utf8");
  const second = await wire();
  expect(second).toContain("nothing to wire");
  return { after, again: readFileSync(file, "utf8"), output };
}

describe("import keeps mcpool's own file's layout", () => {
  it("adds a server to a one-line mcp.json on that line", async () => {
    const { configPath: target, where } = homeWith(
      "cursor",
      JSON.stringify({ mcpServers: { files: { command: "npx", args: FILES } } }),
      {},
    );
    writeFileSync(
      target,
      `{ "mcpServers": { "echo": { "command": "mcpool", "args": ["echo-server"] } } }\n`,
    );
    const cwd = join(where.home, "project");
    await writeImport(await planImport({ target, hosts: ["cursor"], where: { ...where, cwd } }));
    expect(readFileSync(target, "utf8")).toBe(
      `{ "mcpServers": { "echo": { "command": "mcpool", "args": ["echo-server"] }, "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] } } }\n`,
    );
  });
});

describe("wire keeps the file's own layout", () => {
  it("keeps a compact one-line Gemini file on one line", async () => {
    const text = `{"theme":"GitHub","mcpServers":{"files":{"command":"npx","args":${JSON.stringify(FILES)},"env":{"A":"1"},"trust":true}}}\n`;
    const { after, again } = await wireTwice("gemini", text, {
      files: { command: "npx", args: FILES, env: { A: "1" } },
    });
    expect(after).toBe(
      `{"theme":"GitHub","mcpServers":{"files":{"command":${JSON.stringify(NODE)},"args":${JSON.stringify(bridge("files"))},"trust":true}}}\n`,
    );
    expect(again).toBe(after);
  });

  it("keeps a spaced one-line file on one line, in its spacing", async () => {
    const text = `{ "mcpServers": { "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] } } }`;
    const { after, again } = await wireTwice("claude-desktop", text, {
      files: { command: "npx", args: FILES },
    });
    expect(after).toBe(
      `{ "mcpServers": { "files": { "command": "${NODE}", "args": ["${MAIN}", "bridge", "--server", "files", "--socket", "${SOCKET}"] } } }`,
    );
    expect(again).toBe(after);
  });

  it("keeps an entry's own compact spacing in a file spaced elsewhere", async () => {
    const text = `{
  "theme": "dark",
  "mcpServers": {
    "files": {"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]}
  }
}
`;
    const { after, again } = await wireTwice("cursor", text, {
      files: { command: "npx", args: FILES },
    });
    expect(after).toBe(`{
  "theme": "dark",
  "mcpServers": {
    "files": {"command":${JSON.stringify(NODE)},"args":${JSON.stringify(bridge("files"))}}
  }
}
`);
    expect(again).toBe(after);
  });

  it("keeps a file's compact arrays compact though its colons are spaced", async () => {
    const text = `{ "mcpServers": { "files": { "command": "npx", "args":["a","b"] } } }`;
    const { after } = await wireTwice("claude-desktop", text, {
      files: { command: "npx", args: ["a", "b"] },
    });
    expect(after).toBe(
      `{ "mcpServers": { "files": { "command": "${NODE}", "args":${JSON.stringify(bridge("files"))} } } }`,
    );
  });

  it("keeps a pretty-printed file's arrays an item a line, and drops the last key's comma", async () => {
    const text = `${JSON.stringify(
      { mcpServers: { files: { command: "npx", args: FILES, env: { A: "1" } } } },
      null,
      2,
    )}\n`;
    const { after, again } = await wireTwice("cursor", text, {
      files: { command: "npx", args: FILES, env: { A: "1" } },
    });
    expect(after).toBe(
      `${JSON.stringify({ mcpServers: { files: { command: NODE, args: bridge("files") } } }, null, 2)}\n`,
    );
    expect(again).toBe(after);
  });

  it("keeps a tab-indented file's tabs when a remote entry becomes a bridge", async () => {
    const text = `${JSON.stringify(
      {
        mcpServers: {
          remote: { serverUrl: "https://mcp.example.com/mcp", disabled: false },
          other: { command: "other-server", args: ["--flag"] },
        },
      },
      null,
      "\t",
    )}\n`;
    const { after, again } = await wireTwice("windsurf", text, {
      remote: { type: "http", url: "https://mcp.example.com/mcp" },
    });
    expect(after).toBe(
      `${JSON.stringify(
        {
          mcpServers: {
            remote: { disabled: false, command: NODE, args: bridge("remote") },
            other: { command: "other-server", args: ["--flag"] },
          },
        },
        null,
        "\t",
      )}\n`,
    );
    expect(again).toBe(after);
  });

  it("keeps OpenCode's one-line command arrays, comments and trailing commas", async () => {
    const head = `{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "everything": {
      "type": "local",
      // Or ["bun", "x", "my-mcp-command"]
`;
    const tail = `      "enabled": true,
    },
    "jira": { "type": "remote", "url": "https://jira.example.com/mcp", "enabled": false },
  },
}
`;
    const text = `${head}      "command": ["npx", "-y", "@modelcontextprotocol/server-everything"],
      "environment": { "MY_ENV_VAR": "{env:MY_ENV_VAR}" },
${tail}`;
    const { after, again } = await wireTwice("opencode", text, {
      everything: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-everything"],
        env: { MY_ENV_VAR: "${MY_ENV_VAR}" },
      },
    });
    expect(after).toBe(
      `${head}      "command": ${JSON.stringify([NODE, ...bridge("everything")]).replaceAll(",", ", ")},
${tail}`,
    );
    expect(again).toBe(after);
  });

  it("keeps a YAML flow sequence flow, and the rest of Continue's file as it was", async () => {
    const { after, again } = await wireTwice("continue", continueFile(), {
      files: { command: "npx", args: FILES },
    });
    expect(after).toBe(
      continueFile(NODE, `["${MAIN}", "bridge", "--server", "files", "--socket", "${SOCKET}"]`),
    );
    expect(again).toBe(after);
  });

  it("keeps a Codex array on one line when it was on one line", async () => {
    const text = `[mcp_servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
`;
    const { after, again } = await wireTwice("codex", text, {
      files: { command: "npx", args: FILES },
    });
    expect(after).toBe(`[mcp_servers.files]
command = "${NODE}"
args = ["${MAIN}", "bridge", "--server", "files", "--socket", "${SOCKET}"]
`);
    expect(again).toBe(after);
  });
});
