/**
 * The `mcpool` command as a user types it, run built against a real daemon in a
 * private home: every command's own help, no command as exit 2, an unknown name as exit 2,
 * the arguments of `call` from stdin and from a file, and an mcp.json with a byte-order mark
 * or a key written twice.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeAll, afterAll, describe, expect, it } from "vitest";

import { COMMANDS } from "../../src/cli/commands.js";
import {
  cliPath,
  runCli as mcpool,
  runCliAsync,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";

const echo = { command: process.execPath, args: [fixture("echo.mjs")] };

/** The built CLI with `input` on its stdin, to its end (bounded). */
function mcpoolWithStdin(home: TestHome, input: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    env: home.env,
    input,
    encoding: "utf8",
    timeout: 30_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Writes `text` as the home's mcp.json, byte for byte. */
function writeConfigText(home: TestHome, text: string | Buffer): void {
  mkdirSync(dirname(home.configPath), { recursive: true });
  writeFileSync(home.configPath, text);
}

// No daemon, each test a few Node starts: they run side by side, each with a longer bound.
describe.concurrent("help and exit codes without a daemon", { timeout: 90_000 }, () => {
  let home: TestHome;
  beforeAll(() => {
    home = testHome();
  });
  afterAll(() => home?.remove());

  // One test a command: each is a Node start, and 27 of them in one test's time are a
  // clock a busy machine runs out of.
  it.each(COMMANDS.map((command) => [command.name, command] as const))(
    "prints %s's own usage, options and example on stdout for --help, exit 0",
    async (_name, command) => {
      const result = await runCliAsync(home, command.name, "--help");
      expect(result, command.name).toMatchObject({ code: 0, stderr: "" });
      expect(result.stdout.startsWith(`usage: mcpool ${command.synopsis}\n`), command.name).toBe(
        true,
      );
      expect(result.stdout).toMatch(/\nexamples?:\n {2}mcpool /);
      for (const [flag] of "options" in command ? command.options : []) {
        expect(result.stdout).toContain(flag);
      }
    },
  );

  it("answers -h and help COMMAND with the same help as --help", async () => {
    for (const name of ["call", "logs", "serve", "bridge", "validate"]) {
      const help = (await runCliAsync(home, name, "--help")).stdout;
      expect(await runCliAsync(home, name, "-h")).toMatchObject({ code: 0, stdout: help });
      expect(await runCliAsync(home, "help", name)).toMatchObject({ code: 0, stdout: help });
    }
    expect(await runCliAsync(home, "help", "frobnicate")).toMatchObject({
      code: 2,
      stderr: /^mcpool: unknown command "frobnicate"\n/,
    });
  });

  it("prints the usage on stderr and exits 2 when given no command, as git does", async () => {
    const result = await runCliAsync(home);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^usage: mcpool <command> \[options\]\n/);
    expect(result.stderr).toMatch(/\n {2}141 +the reader of stdout or stderr went away/);
    expect(await runCliAsync(home, "--help")).toMatchObject({ code: 0, stdout: /^usage: mcpool / });
  });
});

describe("names and arguments given to a running daemon", () => {
  let home: TestHome;
  let daemon: RunningDaemon;

  beforeAll(async () => {
    home = testHome();
    home.writeConfig({ echo });
    daemon = await startDaemon(home);
    await waitFor(
      () => /"ready"/.test(mcpool(home, "status", "--json").stdout),
      20_000,
      "echo to be ready",
    );
  });

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  it("exits 2 for an unknown tool or server name, whichever command is given it", () => {
    const tool = mcpool(home, "call", "echo__nope", "{}");
    expect(tool).toMatchObject({ code: 2, stdout: "" });
    expect(tool.stderr).toMatch(/^mcpool: .*echo__nope.*\n$/);
    expect(mcpool(home, "describe", "nope")).toMatchObject({
      code: 2,
      stderr: 'mcpool: no server offers the tool "nope"\n',
    });
    expect(mcpool(home, "tools", "--server", "nope").code).toBe(2);
    expect(mcpool(home, "probe", "nope").code).toBe(2);
    expect(mcpool(home, "restart", "nope").code).toBe(2);
  });

  it("says what call takes when given more than a tool and its arguments, and calls nothing", () => {
    expect(mcpool(home, "call", "echo", "echo", '{"text":"a"}')).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "mcpool: call takes a tool's qualified name and one JSON object of arguments, not 3 arguments" +
        " (a tool is named <server>__<tool>: `mcpool call echo__echo …`)\n",
    });
    expect(mcpool(home, "call", "echo__echo", "{}", "{}")).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "mcpool: call takes a tool's qualified name and one JSON object of arguments, not 3 arguments\n",
    });
  });

  it("reads the arguments of call from stdin when given -", () => {
    expect(mcpoolWithStdin(home, '{"text":"from stdin"}\n', "call", "echo__echo", "-")).toEqual({
      code: 0,
      stdout: "from stdin\n",
      stderr: "",
    });
    const array = mcpoolWithStdin(home, "[1, 2]", "call", "echo__echo", "-");
    expect(array).toEqual({
      code: 2,
      stdout: "",
      stderr: "mcpool: the arguments on stdin must be a JSON object, not an array\n",
    });
  });

  it("reads a 200 KB argument from @FILE, which a command line could not carry", () => {
    const text = "x".repeat(200 * 1024);
    const file = join(home.dir, "args.json");
    writeFileSync(file, JSON.stringify({ text }));
    const result = mcpool(home, "call", "echo__echo", `@${file}`, "--json");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const raw = JSON.parse(result.stdout) as { content: { text: string }[] };
    expect(raw.content[0]?.text).toBe(text);
  });

  it("says in one line why the arguments file cannot be used", () => {
    const missing = join(home.dir, "absent.json");
    expect(mcpool(home, "call", "echo__echo", `@${missing}`)).toEqual({
      code: 2,
      stdout: "",
      stderr: `mcpool: cannot read the arguments file ${missing}: no such file\n`,
    });
    const broken = join(home.dir, "broken.json");
    writeFileSync(broken, '{\n  "text": "a",\n  "more": \n}\n');
    expect(mcpool(home, "call", "echo__echo", `@${broken}`)).toEqual({
      code: 2,
      stdout: "",
      stderr: `mcpool: the arguments in ${broken} are not JSON: expected a value at line 4, column 1\n`,
    });
  });
});

describe("an mcp.json as editors write it", () => {
  const fleet = useFleet();

  it("serves a file that starts with a UTF-8 byte-order mark", async () => {
    const home = fleet.home();
    const json = JSON.stringify({ mcpServers: { echo } }, null, 2);
    writeConfigText(home, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]));
    expect(mcpool(home, "validate")).toMatchObject({
      code: 0,
      stdout: "1 valid server(s), 0 problem(s)\n",
    });
    await fleet.daemon(home);
    await waitFor(
      () => /"ready"/.test(mcpool(home, "status", "--json").stdout),
      20_000,
      "echo to be ready",
    );
    expect(mcpool(home, "status").stdout).toMatch(/config\s+.*mcp\.json: ok/);
    expect(mcpool(home, "call", "echo__echo", '{"text":"bom"}')).toMatchObject({
      code: 0,
      stdout: "bom\n",
    });
  });

  it("warns of a key written twice, naming it and its line, in validate and in status", async () => {
    const home = fleet.home();
    const args = JSON.stringify(echo.args);
    const command = JSON.stringify(echo.command);
    writeConfigText(
      home,
      [
        "{",
        '  "mcpServers": {',
        `    "echo": { "command": ${command}, "args": ${args} },`,
        `    "echo": { "command": ${command}, "args": ${args}, "label": "Second" }`,
        "  }",
        "}",
        "",
      ].join("\n"),
    );
    const said = "`mcpServers` has the key `echo` twice (first at line 3); the last one counts";
    expect(mcpool(home, "validate")).toEqual({
      code: 0,
      stdout: `${home.configPath}:4:5: warning: ${said}\n1 valid server(s), 0 problem(s)\n`,
      stderr: "",
    });
    await fleet.daemon(home);
    await waitFor(
      () => /"ready"/.test(mcpool(home, "status", "--json").stdout),
      20_000,
      "echo to be ready",
    );
    expect(mcpool(home, "status").stdout).toContain(`\n        warning: line 4: ${said}\n`);
    const status = JSON.parse(mcpool(home, "status", "--json").stdout) as {
      config: { warnings?: string[] };
    };
    expect(status.config.warnings).toEqual([`line 4: ${said}`]);
    expect(mcpool(home, "tools").stdout).toMatch(/echo__echo\s+\[Second\]/);
  });
});
