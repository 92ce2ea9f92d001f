import { spawn, spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cliPath,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
  runCli,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const mcpool = runCli;

describe("the mcpool command", () => {
  let home: TestHome;
  let daemon: RunningDaemon;

  beforeAll(async () => {
    home = testHome();
    home.writeConfig({
      echo: { command: process.execPath, args: [fixture("echo.mjs")], label: "Echo" },
      broken: { command: "/nonexistent/server" },
    });
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

  it("shows each server's status, pid, tools and last error, and the config file's state", () => {
    const { code, stdout } = mcpool(home, "status");
    expect(code).toBe(0);
    expect(stdout).toMatch(/config\s+.*mcp\.json: ok/);
    // PID, UPTIME, CPU, MEM, CALLS/MIN, TOOLS, PROTOCOL.
    expect(stdout).toMatch(
      /^echo\s+ready\s+\d+\s+\d+s\s+[\d.]+%\s+\d+M\s+\d+\s+4\s+2025-11-25\s*$/m,
    );
    // Whether its backoff still holds when the status is read, and whether its failures have
    // made it a crash loop yet, depend on the machine's speed (the cell's wording either way:
    // test/unit/status-cell.test.ts).
    expect(stdout).toMatch(
      /^broken\s+(error|crash-loop)(, next try in \S+)?\s+-\s+-\s+-\s+-\s+0\s+0\s+-\s+could not connect to server/m,
    );
    expect(JSON.parse(mcpool(home, "status", "--json").stdout).servers[1].error).toMatch(/ENOENT/);
    const json = JSON.parse(mcpool(home, "status", "--json").stdout) as {
      servers: { id: string; status: string }[];
    };
    expect(json.servers.map((s) => s.id)).toEqual(["echo", "broken"]);
    expect(json.servers[0]?.status).toBe("ready");
    expect(json.servers[1]?.status).toMatch(/^(error|crash-loop)$/);
  });

  it("lists tools, for one server or all", () => {
    const all = mcpool(home, "tools");
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/echo__echo\s+\[Echo\]/);
    const json = JSON.parse(mcpool(home, "tools", "--server", "echo", "--json").stdout) as {
      function: { name: string };
    }[];
    expect(json.map((t) => t.function.name)).toEqual([
      "echo__echo",
      "echo__add",
      "echo__sleep",
      "echo__pid",
    ]);
  });

  it("calls a tool and prints its answer, with exit code 2 for bad JSON and an unknown tool", () => {
    expect(mcpool(home, "call", "echo__echo", '{"text":"from the cli"}')).toMatchObject({
      code: 0,
      stdout: "from the cli\n",
    });
    const raw = JSON.parse(mcpool(home, "call", "echo__echo", '{"text":"x"}', "--json").stdout) as {
      content: unknown[];
    };
    expect(raw.content).toEqual([{ type: "text", text: "x" }]);
    const badJson = mcpool(home, "call", "echo__echo", "{not json");
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/not JSON/);
    const unknown = mcpool(home, "call", "echo__nothing", "{}");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no server offers the tool "echo__nothing"/);
    expect(mcpool(home, "frobnicate").code).toBe(2);
  });

  it("probes, stops and restarts one server", () => {
    const probe = mcpool(home, "probe", "echo");
    expect(probe.code).toBe(0);
    expect(probe.stdout).toMatch(/echo: ok, 4 tools/);
    expect(mcpool(home, "probe", "broken").code).toBe(1);
    const before = Number(mcpool(home, "call", "echo__pid").stdout);
    expect(mcpool(home, "stop", "echo").code).toBe(0);
    expect(alive(before)).toBe(false);
    expect(mcpool(home, "status").stdout).toMatch(/^echo\s+idle \(stale\)/m);
    expect(mcpool(home, "restart", "echo").code).toBe(0);
    const after = Number(mcpool(home, "call", "echo__pid").stdout);
    expect(after).not.toBe(before);
    expect(mcpool(home, "restart", "nope").code).toBe(2);
  });

  it("reloads, and validates a file with every problem and its line", () => {
    expect(mcpool(home, "reload")).toMatchObject({ code: 0 });
    const file = join(home.dir, "candidate.json");
    writeFileSync(
      file,
      '{\n  // a comment, as VS Code writes\n  "mcpServers": {\n    "ok": { "command": "node" },\n    "bad": { "url": "http://example.com/mcp" },\n  }\n}\n',
    );
    const result = mcpool(home, "validate", file);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(`${file}:5:`);
    expect(result.stdout).toMatch(/1 valid server\(s\), 1 problem\(s\)/);
    writeFileSync(file, '{ "mcpServers": { "a": ');
    expect(mcpool(home, "validate", file).stdout).toMatch(/:1:\d+: expected a value\n$/);
  });

  it("says the daemon is not running with exit code 3", () => {
    const elsewhere = testHome();
    try {
      const result = mcpool(elsewhere, "status");
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/mcpool serve/);
    } finally {
      elsewhere.remove();
    }
  });

  it("says one line per bad input, and the usage only for --help or an unknown command", () => {
    const oneLine = (stderr: string) => {
      expect(stderr.split("\n")).toHaveLength(2);
      expect(stderr).not.toContain("usage:");
    };
    const badJson = mcpool(home, "call", "echo__echo", "{not json");
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/^mcpool: the arguments of call are not JSON: /);
    oneLine(badJson.stderr);
    const noName = mcpool(home, "call");
    expect(noName).toMatchObject({ code: 2, stderr: "mcpool: call needs QUALIFIED tool name\n" });
    const badOption = mcpool(home, "status", "--frob");
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toMatch(/^mcpool: Unknown option '--frob'/);
    oneLine(badOption.stderr);
    const missing = mcpool(home, "validate", join(home.dir, "absent.json"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^mcpool: cannot read .*absent\.json: ENOENT/);
    oneLine(missing.stderr);

    const unknown = mcpool(home, "frobnicate");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^mcpool: unknown command "frobnicate"\n\nusage: mcpool /);
    expect(mcpool(home, "--help")).toMatchObject({ code: 0, stdout: /^usage: mcpool / });
  });

  it("exits 2 naming an unknown server id instead of listing nothing", () => {
    const said = 'mcpool: unknown server "nope"; the servers are echo, broken\n';
    expect(mcpool(home, "tools", "--server", "nope")).toMatchObject({
      code: 2,
      stdout: "",
      stderr: said,
    });
    expect(mcpool(home, "search", "echo", "--server", "nope")).toMatchObject({
      code: 2,
      stderr: said,
    });
  });

  it("prints the log as JSON lines with --json", () => {
    const { code, stdout } = mcpool(home, "logs", "--json");
    expect(code).toBe(0);
    const entries = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { time: string; level: string; message: string });
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(entries.some((e) => e.level === "info" && /^mcpool: serving /.test(e.message))).toBe(
      true,
    );
  });

  it("says that a stopped server starts again on its next call, and it does", () => {
    expect(mcpool(home, "stop", "echo")).toMatchObject({
      code: 0,
      stdout:
        "echo: stopped; the next call to one of its tools starts it again (`mcpool restart echo` starts it now)\n",
    });
    const pid = Number(mcpool(home, "call", "echo__pid").stdout);
    expect(alive(pid)).toBe(true);
  });

  it("points at --json and logs when status cuts an error short", async () => {
    // The broken server retries by itself (self-healing); between tries it shows no error.
    let stdout = "";
    await waitFor(
      () => /^broken\s.*…$/m.test((stdout = mcpool(home, "status").stdout)),
      20_000,
      "broken's error to be shown cut",
    );
    expect(stdout).toContain(
      "errors ending in … are cut: `mcpool status --json` or `mcpool logs` has them whole",
    );
  });

  it("shows a progress line for a slow call on a terminal only", () => {
    // Longer than the second after which the line appears (progress.ts).
    const slow = ["call", "echo__sleep", '{"ms":2500}'];
    const piped = mcpool(home, ...slow);
    expect(piped).toMatchObject({ code: 0, stderr: "" });
    expect(piped.stdout).toMatch(/slept/);
    // `script` gives the command a pseudo-terminal, as a person's shell would.
    const command = [process.execPath, cliPath, ...slow].map((a) => `'${a}'`).join(" ");
    const tty = spawnSync("script", ["-qfec", command, "/dev/null"], {
      env: home.env,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(tty.status).toBe(0);
    expect(tty.stdout).toMatch(/⠋ calling echo__sleep \(\d+s\)/);
    // The line is erased before the answer is printed.
    const erased = tty.stdout.lastIndexOf("\r\u001b[K");
    expect(erased).toBeGreaterThan(-1);
    expect(tty.stdout.slice(erased)).toMatch(/slept 2500/);
  });

  it("prints the demo as one JSON document with --json", () => {
    const run = mcpool(home, "demo", "--json");
    expect(run.code).toBe(0);
    const demo = JSON.parse(run.stdout) as {
      server: { id: string; status: string; pid: number };
      tools: { name: string; description: string }[];
      call: { tool: string; input: unknown; result: string };
    };
    expect(demo.server).toMatchObject({ id: "echo", status: "ready" });
    expect(demo.server.pid).toBeGreaterThan(0);
    expect(demo.tools.map((t) => t.name)).toContain("echo__add");
    expect(demo.call).toEqual({
      tool: "echo__add",
      input: { a: 1, b: 2 },
      result: `add(${JSON.stringify({ a: 1, b: 2 })})`,
    });
  });

  it("shows the log, and shuts the daemon down", async () => {
    expect(mcpool(home, "logs").stdout).toMatch(/serving /);
    expect(mcpool(home, "shutdown").code).toBe(0);
    expect(await daemon.stop()).toBe(0);
  });
});

describe("the daemon's log of config reads", () => {
  it("logs each reload, and an invalid row once however often the file is read", async () => {
    const home = testHome();
    const echo = { command: process.execPath, args: [fixture("echo.mjs")] };
    home.writeConfig({ echo, typo: { command: "node", evn: {} } });
    const daemon = await startDaemon(home);
    try {
      const typo = /`typo`: `evn` is not a setting; did you mean `env`\?/g;
      const reloaded = /mcpool: reloaded .*mcp\.json: 1 problem\(s\), those rows left out/g;
      for (let i = 0; i < 2; i++) expect(mcpool(home, "reload").code).toBe(0);
      const log = mcpool(home, "logs", "-n", "500").stdout;
      expect(log.match(reloaded)?.length).toBeGreaterThanOrEqual(2);
      expect(log.match(typo)).toHaveLength(1);

      // A missing file is said once, without the keeping repeated.
      rmSync(home.configPath);
      expect(mcpool(home, "reload").stdout).toMatch(
        /mcp\.json: the file is missing; the last good configuration keeps running\n$/,
      );
      await waitFor(
        () =>
          /the file is missing; the last good configuration keeps running$/m.test(
            mcpool(home, "logs").stdout,
          ),
        10_000,
        "the missing file to be logged",
      );
    } finally {
      await daemon.stop();
      home.remove();
    }
  });

  it("follows the log with -f, each line as JSON with the server it is about", async () => {
    const home = testHome();
    const echo = { command: process.execPath, args: [fixture("echo.mjs")] };
    home.writeConfig({ echo });
    const daemon = await startDaemon(home);
    const follower = spawn(process.execPath, [cliPath, "logs", "-f", "--json", "-n", "1"], {
      env: home.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    follower.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise((resolve) => follower.once("exit", resolve));
    try {
      // Its first line is the tail; what follows is written after it started.
      await waitFor(() => out.includes("\n"), 10_000, "the tail to be printed");
      home.writeConfig({
        echo,
        late: { ...echo, args: [fixture("echo.mjs"), "${MCPOOL_UNSET_X}"] },
      });
      expect(mcpool(home, "reload").code).toBe(0);
      const entries = () =>
        out
          .trimEnd()
          .split("\n")
          .map((line) => JSON.parse(line) as { message: string; server?: string });
      await waitFor(
        () => entries().some((e) => e.server === "late" && /MCPOOL_UNSET_X/.test(e.message)),
        20_000,
        "the follower to print the late server's line",
      );
      expect(entries().some((e) => /^mcpool: reloaded /.test(e.message))).toBe(true);
    } finally {
      follower.kill("SIGTERM");
      await exited;
      await daemon.stop();
      home.remove();
    }
  });
});
