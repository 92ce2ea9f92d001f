/**
 * Watching the pool through a real daemon, the real CLI and a real terminal:
 * `mcpool top` runs in tmux against three servers (every line and the footer drawn, `r`
 * restarts the selected server, `q` and Ctrl-C quit, `stty -a` is the same after as
 * before); `stats` counts calls across a restart and `--unused` prices what is never called;
 * `hide` edits a commented mcp.json and the tool is no longer offered; a server that grows
 * past its `maxMemoryMb` is replaced while the call in flight on it still gets its answer.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PoolClient, PoolEvent } from "mcpool-client";
import {
  cliPath,
  client,
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, fixture, nextMatching, waitFor } from "../helpers/processes.js";

/** Bound on any one wait for the daemon or the terminal to reach a state, ms. */
const BOUND_MS = 20_000;
/** Each test runs the CLI several times, a Node start each: generous on a loaded machine. */
const TEST_MS = 90_000;

const mcpool = runCli;

function writeText(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const node = (script: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  command: process.execPath,
  args: [fixture(script)],
  ...extra,
});

/** Resolves when the server `id` is ready with a pid other than `not`. */
async function readyWithNewPid(c: PoolClient, id: string, not: number): Promise<number> {
  let pid = 0;
  await waitFor(
    async () => {
      const s = (await c.state()).find((state) => state.id === id);
      pid = s?.status === "ready" && s.pid !== undefined && s.pid !== not ? s.pid : 0;
      return pid !== 0;
    },
    BOUND_MS,
    `${id} to be ready again with a new pid`,
  );
  return pid;
}

describe("mcpool top in a real terminal", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let observer: PoolClient;
  const tmux = (...args: string[]): string =>
    spawnSync("tmux", ["-L", `mcpool-top-${process.pid}`, ...args], {
      encoding: "utf8",
      timeout: 10_000,
    }).stdout;

  beforeAll(async () => {
    home = testHome("mcpool-top-");
    home.writeConfig({
      alpha: node("echo.mjs"),
      beta: node("echo.mjs"),
      gamma: node("gate.mjs", { maxMemoryMb: 4000 }),
    });
    daemon = await startDaemon(home);
    observer = await client(home, "observer");
    await waitFor(
      async () => (await observer.state()).every((s) => s.status === "ready"),
      BOUND_MS,
      "three servers to be ready",
    );
  });

  afterAll(async () => {
    tmux("kill-server");
    await observer?.close();
    await daemon?.stop();
    home?.remove();
  });

  it(
    "draws every server and the footer, restarts with r, quits with q and Ctrl-C, and leaves the terminal as it was",
    async () => {
      const out = join(home.dir, "tty");
      mkdirSync(out, { recursive: true });
      const env = ["HOME", "PATH", "MCPOOL_SOCKET", "MCPOOL_CONFIG", "MCPOOL_TEST_RUN"]
        .concat(Object.keys(home.env).filter((k) => k.startsWith("XDG_")))
        .map((k) => `export ${k}='${home.env[k] ?? ""}'`);
      const top = `'${process.execPath}' '${cliPath}' top`;
      writeText(
        join(out, "run.sh"),
        [
          ...env,
          `cd '${out}'`,
          // Each file appears whole (renamed into place), so a test that sees it reads it all.
          'put() { cat > "$1.tmp"; mv "$1.tmp" "$1"; }',
          "stty -a | put before",
          `${top}; echo $? | put code1`,
          "stty -a | put after1",
          // The test looks at the screen the first run left, then lets the second begin.
          "read go",
          `${top}; echo $? | put code2`,
          "stty -a | put after2",
        ].join("\n"),
      );
      tmux("new-session", "-d", "-x", "100", "-y", "30", "sh", join(out, "run.sh"));
      const screen = (): string => tmux("capture-pane", "-p");
      await waitFor(
        () => /alpha .*ready/.test(screen()) && /gamma .*ready/.test(screen()),
        BOUND_MS,
        "top to draw its servers",
      );
      const drawn = screen();
      for (const id of ["alpha", "beta", "gamma"])
        expect(drawn).toMatch(new RegExp(`^${id} `, "m"));
      expect(drawn).toMatch(/^daemon pid \d+ · rss \d+M · agents \d+ · config ok/m);
      expect(drawn).toMatch(/^SERVER +STATUS +PID +UP +CPU +MEM/m);
      // Fits 80 columns.
      for (const line of drawn.split("\n")) expect(line.trimEnd().length).toBeLessThanOrEqual(80);

      // Down to beta, then r: the daemon restarts beta, and only beta.
      const before = (await observer.state()).find((s) => s.id === "beta")!.pid!;
      const alphaPid = (await observer.state()).find((s) => s.id === "alpha")!.pid!;
      const restarted = nextMatching<PoolEvent>(
        (listener) => observer.onEvent(listener),
        (event) => event.type === "connect" && event.serverId === "beta",
        BOUND_MS,
      );
      // Both in one write, as a busy machine delivers them: top must act on each.
      tmux("send-keys", "Down", "r");
      await restarted;
      await readyWithNewPid(observer, "beta", before);
      expect((await observer.state()).find((s) => s.id === "alpha")!.pid).toBe(alphaPid);
      await waitFor(() => screen().includes("restarting beta: done"), BOUND_MS, "top to say so");

      tmux("send-keys", "q");
      await waitFor(() => existsSync(join(out, "code1")), BOUND_MS, "top to quit on q");
      expect(readFileSync(join(out, "code1"), "utf8").trim()).toBe("0");

      // Left as it found it: no frame painted after the view was left (a late refresh did).
      await waitFor(() => existsSync(join(out, "after1")), BOUND_MS, "the shell to go on");
      expect(screen()).not.toMatch(/SERVER +STATUS|gamma/);

      // The second run: Ctrl-C, once its own frame is up, so raw mode is on and the key
      // reaches top rather than the shell as SIGINT.
      tmux("send-keys", "Enter");
      await waitFor(() => /gamma .*ready/.test(screen()), BOUND_MS, "top to draw again");
      tmux("send-keys", "C-c");
      await waitFor(() => existsSync(join(out, "after2")), BOUND_MS, "top to end on Ctrl-C");

      const stty = readFileSync(join(out, "before"), "utf8");
      expect(stty).toContain("icanon");
      expect(readFileSync(join(out, "after1"), "utf8")).toBe(stty);
      expect(readFileSync(join(out, "after2"), "utf8")).toBe(stty);
    },
    TEST_MS,
  );

  it(
    "fits a 50×15 terminal: header, every server and the footer drawn, no line wrapped, the log below",
    async () => {
      const out = join(home.dir, "tty-small");
      mkdirSync(out, { recursive: true });
      const env = ["HOME", "PATH", "MCPOOL_SOCKET", "MCPOOL_CONFIG", "MCPOOL_TEST_RUN"]
        .concat(Object.keys(home.env).filter((k) => k.startsWith("XDG_")))
        .map((k) => `export ${k}='${home.env[k] ?? ""}'`);
      writeText(
        join(out, "run.sh"),
        [
          ...env,
          `'${process.execPath}' '${cliPath}' top; echo $? > '${join(out, "code.tmp")}'`,
          `mv '${join(out, "code.tmp")}' '${join(out, "code")}'`,
        ].join("\n"),
      );
      tmux("new-session", "-d", "-s", "small", "-x", "50", "-y", "15", "sh", join(out, "run.sh"));
      const screen = (): string => tmux("capture-pane", "-p", "-t", "small");
      await waitFor(
        () => /^gamma .*ready/m.test(screen()) && /^config /m.test(screen()),
        BOUND_MS,
        "top to draw its servers and footer in 50 columns",
      );
      const drawn = screen();
      expect(drawn.split("\n")[0]).toMatch(/^mcpool top · 3 server\(s\)/);
      for (const id of ["alpha", "beta", "gamma"])
        expect(drawn).toMatch(new RegExp(`^${id} `, "m"));
      expect(drawn).toMatch(/^daemon pid \d+ · rss \d+M/m);
      // Whole columns, fewer of them: not the 80-column table cut mid-name at the edge.
      expect(drawn).toMatch(/^SERVER +STATUS +PID +CPU +MEM +C\/MIN *$/m);
      for (const line of drawn.split("\n")) expect(line.trimEnd().length).toBeLessThanOrEqual(50);

      tmux("send-keys", "-t", "small", "l");
      await waitFor(() => screen().includes("log of alpha:"), BOUND_MS, "the log pane");
      const withLog = screen();
      expect(withLog.split("\n")[0]).toMatch(/^mcpool top/);
      expect(withLog).toMatch(/^daemon pid \d+/m);
      for (const line of withLog.split("\n")) expect(line.trimEnd().length).toBeLessThanOrEqual(50);

      tmux("send-keys", "-t", "small", "q");
      await waitFor(() => existsSync(join(out, "code")), BOUND_MS, "top to quit on q");
      expect(readFileSync(join(out, "code"), "utf8").trim()).toBe("0");
    },
    TEST_MS,
  );

  it("prints one frame without escape codes with --once", () => {
    const { code, stdout } = mcpool(home, "top", "--once");
    expect(code).toBe(0);
    expect(stdout).not.toContain("\x1b");
    for (const id of ["alpha", "beta", "gamma"])
      expect(stdout).toMatch(new RegExp(`^${id} +ready`, "m"));
    expect(stdout).toMatch(/^gamma \d+M\/4000M \(0 restarts\)/m);
  });

  it("refuses to draw without a terminal and says what to use", () => {
    const { code, stderr } = mcpool(home, "top");
    expect(code).toBe(1);
    expect(stderr).toContain("top --once");
  });

  it("puts CPU, memory and calls of each server in status and status --json", async () => {
    await observer.call("alpha__echo", { text: "x" });
    const status = JSON.parse(mcpool(home, "status", "--json").stdout) as {
      rssBytes: number;
      servers: { id: string; pid: number; resources: Record<string, number> }[];
    };
    expect(status.rssBytes).toBeGreaterThan(0);
    const alpha = status.servers.find((s) => s.id === "alpha")!;
    expect(alpha.resources.rssBytes).toBeGreaterThan(1024 * 1024);
    expect(alpha.resources.processes).toBe(1);
    expect(alpha.resources.cpuPercent).toBeGreaterThanOrEqual(0);
    expect(alpha.resources.callsLastMinute).toBeGreaterThanOrEqual(1);
    expect(alpha.resources.p50Ms).toBeGreaterThanOrEqual(0);
    const text = mcpool(home, "status").stdout;
    expect(text).toMatch(/^SERVER +STATUS +PID +UPTIME +CPU +MEM +CALLS\/MIN/m);
    expect(text).toMatch(/^gamma +ready +\d+ +\S+ +\S+% +\d+M\/4000M/m);
  });

  it("says a server whose process is stopped is stopped, and how to continue it", async () => {
    const pid = (await observer.state()).find((s) => s.id === "alpha")!.pid!;
    process.kill(pid, "SIGSTOP");
    try {
      const text = mcpool(home, "status").stdout;
      expect(text).toMatch(new RegExp(`^alpha +ready, stopped +${pid} `, "m"));
      expect(text).toContain(
        `alpha: its process (pid ${pid}) is stopped: calls wait until it is continued (kill -CONT ${pid}) or time out`,
      );
      expect(text).toMatch(/^gamma +ready +\d+ /m);
      const json = JSON.parse(mcpool(home, "status", "--json").stdout) as {
        servers: { id: string; resources: { stopped?: boolean } }[];
      };
      expect(json.servers.find((s) => s.id === "alpha")!.resources.stopped).toBe(true);
      expect(json.servers.find((s) => s.id === "gamma")!.resources.stopped).toBeUndefined();
    } finally {
      process.kill(pid, "SIGCONT");
    }
    expect(mcpool(home, "status").stdout).not.toContain("stopped");
    const answer = await observer.call("alpha__echo", { text: "continued" });
    expect(JSON.stringify(answer)).toContain("continued");
  });
});

describe("usage that trims the catalog", () => {
  let home: TestHome;
  let daemon: RunningDaemon;

  const commented = (): string =>
    [
      "// my servers",
      "{",
      '  "mcpServers": {',
      "    // the echo server, kept warm",
      `    "echo": { "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixture("echo.mjs"))}] },`,
      `    "gate": { "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixture("gate.mjs"))}] }, // trailing`,
      "  },",
      "}",
      "",
    ].join("\n");

  beforeAll(async () => {
    home = testHome("mcpool-stats-");
    writeText(home.configPath, commented());
    daemon = await startDaemon(home);
  });

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  it(
    "counts calls per tool across a restart, names the never-called tools with their cost, and hides one keeping the file's comments",
    async () => {
      const c = await client(home);
      try {
        await c.call("echo__echo", { text: "a" });
        await c.call("echo__echo", { text: "b" });
        await c.call("gate__pid", {});
      } finally {
        await c.close();
      }
      // Stopped and started again: the counts are read back from the data directory.
      await daemon.stop();
      daemon = await startDaemon(home);

      type Row = {
        serverId: string;
        tool: string;
        calls: number;
        qualified: string;
        tokens: number;
      };
      const used = JSON.parse(mcpool(home, "stats", "--json").stdout) as { tools: Row[] };
      expect(used.tools.map((t) => [t.qualified, t.calls])).toEqual([
        ["echo__echo", 2],
        ["gate__pid", 1],
      ]);
      expect(used.tools[0]!.tokens).toBeGreaterThan(0);
      const scoped = JSON.parse(
        mcpool(home, "stats", "--server", "gate", "--since", "7d", "--json").stdout,
      ) as {
        tools: Row[];
      };
      expect(scoped.tools.map((t) => t.qualified)).toEqual(["gate__pid"]);

      const unused = JSON.parse(mcpool(home, "stats", "--unused", "--json").stdout) as {
        tools: Row[];
        tokens: number;
      };
      expect(unused.tools.map((t) => t.qualified).sort()).toEqual(
        ["echo__add", "echo__pid", "echo__sleep", "gate__grow", "gate__wait"].sort(),
      );
      for (const t of unused.tools) expect(t.tokens).toBeGreaterThan(0);
      expect(unused.tokens).toBe(unused.tools.reduce((sum, t) => sum + t.tokens, 0));
      const human = mcpool(home, "stats", "--unused").stdout;
      expect(human).toContain(`5 tool(s) not called ever cost ~${unused.tokens} tokens per turn`);

      const hide = mcpool(home, "hide", "echo", "sleep", "echo__add");
      expect(hide.stderr).toBe("");
      expect(hide.code).toBe(0);
      const text = readFileSync(home.configPath, "utf8");
      expect(text).toContain("// my servers");
      expect(text).toContain("// the echo server, kept warm");
      expect(text).toContain("// trailing");
      expect(text).toContain('"hiddenTools": ["sleep","add"]');
      const offered = JSON.parse(mcpool(home, "tools", "--json").stdout) as {
        function: { name: string };
      }[];
      const names = offered.map((t) => t.function.name);
      expect(names).not.toContain("echo__sleep");
      expect(names).not.toContain("echo__add");
      expect(names).toContain("echo__echo");

      expect(mcpool(home, "unhide", "echo", "sleep", "add").code).toBe(0);
      expect(readFileSync(home.configPath, "utf8")).toBe(commented());
      const again = JSON.parse(mcpool(home, "tools", "--json").stdout) as {
        function: { name: string };
      }[];
      expect(again.map((t) => t.function.name)).toContain("echo__sleep");
    },
    TEST_MS,
  );
});

describe("memory limits", () => {
  let home: TestHome;
  let daemon: RunningDaemon;

  beforeAll(async () => {
    home = testHome("mcpool-memory-");
    home.writeConfig(
      { hog: node("gate.mjs", { maxMemoryMb: 200 }), calm: node("echo.mjs") },
      // Sampled often, so the test waits for two samples, not two default intervals.
      { mcpool: { memoryCheckMs: 100 } },
    );
    daemon = await startDaemon(home);
  });

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  it(
    "replaces a server that stays over maxMemoryMb, and the call in flight on it still gets its answer",
    async () => {
      const c = await client(home);
      try {
        const pid = Number(await c.call("hog__pid", {}));
        const calmPid = Number(await c.call("calm__pid", {}));
        const gate = join(home.dir, "gate-open");
        const overMemory = nextMatching<PoolEvent>(
          (listener) => c.onEvent(listener),
          (event) => event.type === "over-memory" && event.serverId === "hog",
          BOUND_MS,
        );
        const held = c.call("hog__wait", { path: gate });
        await waitFor(
          async () => (await c.state()).find((s) => s.id === "hog")?.inflight === 1,
          BOUND_MS,
          "the held call to be in flight",
        );
        await c.call("hog__grow", { mb: 300 });
        const event = (await overMemory) as Extract<PoolEvent, { type: "over-memory" }>;
        expect(event.limitMb).toBe(200);
        expect(event.rssBytes).toBeGreaterThan(200 * 1024 * 1024);
        // The old child drains: the call in flight is answered, then it is closed.
        expect(alive(pid)).toBe(true);
        writeFileSync(gate, "");
        expect(await held).toBe(`opened ${gate}`);
        await waitFor(() => !alive(pid), BOUND_MS, "the old child to be gone");
        await readyWithNewPid(c, "hog", pid);
        expect((await c.state()).find((s) => s.id === "calm")?.pid).toBe(calmPid);

        const status = JSON.parse(mcpool(home, "status", "--json").stdout) as {
          servers: { id: string; resources: { overMemoryRestarts: number; maxMemoryMb: number } }[];
        };
        const hog = status.servers.find((s) => s.id === "hog")!;
        expect(hog.resources).toMatchObject({ overMemoryRestarts: 1, maxMemoryMb: 200 });
        expect(mcpool(home, "status").stdout).toContain(
          "hog: replaced 1 time(s) for staying over maxMemoryMb (200 MB)",
        );

        // The log says why, and `logs --server` keeps to the one server.
        const logs = mcpool(home, "logs", "--server", "hog", "-n", "200").stdout;
        expect(logs).toMatch(/mcpool: hog: its processes use \d+ MB, over its maxMemoryMb of 200/);
        expect(logs).not.toContain("mcpool: calm:");
      } finally {
        await c.close();
      }
    },
    TEST_MS,
  );
});
