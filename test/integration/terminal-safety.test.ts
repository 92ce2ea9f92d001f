/**
 * Nothing a server sends reaches a terminal as control bytes.
 * A real daemon pools test/fixtures/hostile-text.mjs — whose tool names, titles,
 * descriptions, input-schema keys and results hold OSC 0 (window title), OSC 52 (clipboard
 * write), CSI (clear screen, red), BEL and a C1 CSI — and a remote row whose server answers
 * every request 500 with an HTML page holding the same; mcp.json has a row whose key holds
 * them too. Every command a person reads runs under a real pty (`script` from util-linux),
 * and what the pty carried must hold none of those bytes, only their visible `\xNN` form,
 * while `--json` still carries the exact strings.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cliPath,
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";

// What hostile-text.mjs puts in every string it sends.
const TITLE = "\x1b]0;pwned\x07";
const CLIPBOARD = "\x1b]52;c;aGVsbG8=\x07";
const HOSTILE = `${TITLE}${CLIPBOARD}\x1b[2J\x1b[31m\x07\u009b1m`;
/** The same as a person should see it. */
const SHOWN = String.raw`\x1b]0;pwned\x07\x1b]52;c;aGVsbG8=\x07\x1b[2J\x1b[31m\x07\x9b1m`;
/** The mcp.json key that holds a window title, as shown. */
const KEY_SHOWN = String.raw`bad\x1b]0;pwned\x07key`;

/** A 500 page as a misconfigured proxy sends it: long, and as hostile as the fixture. */
const PAGE_LINES = 200;
const ERROR_PAGE = [
  "<!DOCTYPE html>",
  `<html><head><title>${TITLE}500</title></head><body>${CLIPBOARD}\x1b[2J<h1>Internal Server Error</h1>\x07`,
  ...Array.from({ length: PAGE_LINES }, (_, i) => `<p>trace line ${i + 1}</p>`),
  "</body></html>",
].join("\n");

/** The erase-line the CLI's own progress line draws on a terminal (output/progress.ts). */
const PROGRESS_ERASE = "\r\x1b[K";

const quote = (arg: string): string => `'${arg.replaceAll("'", `'\\''`)}'`;

/** How long one command may take at the terminal before the test gives up on it. */
const COMMAND_BOUND_MS = 30_000;

/**
 * Runs the built CLI under a pty, as a person at a terminal would; what the pty carried.
 * Asynchronous: the remote row's server lives in this process and must keep answering.
 */
async function atTerminal(
  home: TestHome,
  ...args: string[]
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, cliPath, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    env: home.env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), COMMAND_BOUND_MS);
  const [code] = (await once(child, "close")) as [number | null];
  clearTimeout(timer);
  return { code, output: Buffer.concat(chunks).toString("utf8") };
}

/** Asserts that no control byte a server sent survived, whatever else the output says. */
function expectNoControlBytes(output: string): void {
  const ours = output.replaceAll(PROGRESS_ERASE, "");
  expect(ours).not.toContain("\x1b");
  expect(ours).not.toContain("\x07");
  // C1 controls as characters, and a lone C1 byte (which would decode as U+FFFD).
  expect(ours).not.toMatch(/[\u0080-\u009f\ufffd]/);
}

describe("server text at a terminal", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let remote: Server;
  let paint: string;

  beforeAll(async () => {
    remote = createServer((request, response) => {
      request.resume();
      response.writeHead(500, { "content-type": "text/html" }).end(ERROR_PAGE);
    });
    remote.listen(0, "127.0.0.1");
    await once(remote, "listening");
    const { port } = remote.address() as AddressInfo;
    home = testHome("mcpool-terminal-");
    home.writeConfig({
      hostile: { command: process.execPath, args: [fixture("hostile-text.mjs")] },
      remote: { url: `http://127.0.0.1:${port}/mcp` },
      [`bad${TITLE}key`]: { command: process.execPath },
    });
    daemon = await startDaemon(home);
    await waitFor(
      () => {
        const servers = (
          JSON.parse(runCli(home, "status", "--json").stdout) as {
            servers: { id: string; status: string; error?: string }[];
          }
        ).servers;
        return (
          servers.find((s) => s.id === "hostile")?.status === "ready" &&
          servers.find((s) => s.id === "remote")?.error !== undefined
        );
      },
      20_000,
      "hostile to be ready and remote to have failed",
    );
    const tools = JSON.parse(runCli(home, "tools", "--json").stdout) as {
      function: { name: string };
    }[];
    paint = tools.map((t) => t.function.name).find((name) => name.startsWith("hostile__paint"))!;
  });

  afterAll(async () => {
    await daemon?.stop();
    remote?.close();
    home?.remove();
  });

  it.each([
    // A table cell is cut to its width after the bytes are shown.
    ["tools", () => ["tools"], String.raw`Paints \x1b]0;pwned\x07\x1b]52;c;`],
    ["search", () => ["search", "paints"], String.raw`Paints \x1b]0;pwned\x07\x1b]52;c;`],
    ["describe", () => ["describe", paint], `title        Paint ${SHOWN}`],
    ["call", () => ["call", paint], `result ${SHOWN} done`],
    ["a failed call", () => ["call", "hostile__fail"], `mcpool: it failed ${SHOWN}`],
    ["approve --show", () => ["approve", "hostile", "--show"], `paint${SHOWN}: Paints`],
    ["status", () => ["status"], `: \`${KEY_SHOWN}\`: \`id\``],
    ["validate", () => ["validate"], `\`${KEY_SHOWN}\``],
  ])("%s shows the server's control bytes as text and sends none", async (_name, args, shown) => {
    const { output } = await atTerminal(home, ...args());
    expectNoControlBytes(output);
    expect(output).toContain(shown);
  });

  it("describe keeps the schema's keys as JSON escapes and its C1 bytes visible", async () => {
    const { output } = await atTerminal(home, "describe", paint);
    expectNoControlBytes(output);
    expect(output).toContain(String.raw`"key\u001b]0;pwned\u0007`);
    expect(output).toContain(String.raw`\u001b[31m\u0007\x9b1m"`);
  });

  it.each([
    ["restart", ["restart", "remote"]],
    ["probe", ["probe", "remote"]],
  ])(
    "%s of a remote answering 500 shows the page's first lines, cut, without its bytes",
    async (_n, args) => {
      const { code, output } = await atTerminal(home, ...args);
      expect(code).toBe(1);
      expectNoControlBytes(output);
      expect(output).toContain(String.raw`<title>\x1b]0;pwned\x07500</title>`);
      expect(output).toContain("trace line 1<");
      expect(output).toMatch(/more lines cut/);
      expect(output).not.toContain(`trace line ${PAGE_LINES / 2}<`);
    },
  );

  it.each([
    ["logs", ["logs", "-n", "500"]],
    ["logs --server", ["logs", "--server", "remote"]],
    ["stats", ["stats"]],
    ["stats --unused", ["stats", "--unused"]],
    ["top --once", ["top", "--once"]],
  ])("%s sends no control byte a server sent", async (_name, args) => {
    const { code, output } = await atTerminal(home, ...args);
    expect(code).toBe(0);
    expectNoControlBytes(output);
  });

  it("logs show the remote's page with its stray BEL visible", async () => {
    const { output } = await atTerminal(home, "logs", "-n", "500");
    expectNoControlBytes(output);
    expect(output).toContain(String.raw`<h1>Internal Server Error</h1>\x07`);
  });

  it("--json keeps the exact strings the server sent", () => {
    const tools = JSON.parse(runCli(home, "tools", "--server", "hostile", "--json").stdout) as {
      function: { name: string; description: string };
    }[];
    expect(tools.map((t) => t.function.description)).toContain(
      `[hostile] Paints ${HOSTILE} over your terminal`,
    );
    const info = JSON.parse(runCli(home, "describe", paint, "--json").stdout) as {
      toolName: string;
      title: string;
      inputSchema: { properties: Record<string, unknown> };
    };
    expect(info.toolName).toBe(`paint${HOSTILE}`);
    expect(info.title).toBe(`Paint ${HOSTILE}`);
    expect(Object.keys(info.inputSchema.properties)).toEqual([`key${HOSTILE}`]);
    const found = JSON.parse(runCli(home, "search", "paints", "--json").stdout) as {
      tools: { description?: string }[];
    }[];
    expect(found[0]!.tools[0]!.description).toBe(`Paints ${HOSTILE} over your terminal`);
    const raw = JSON.parse(runCli(home, "call", paint, "--json").stdout) as {
      content: { text: string }[];
    };
    expect(raw.content).toEqual([{ type: "text", text: `result ${HOSTILE} done` }]);
    const status = JSON.parse(runCli(home, "status", "--json").stdout) as {
      config: { problems: string[] };
    };
    expect(status.config.problems.join("\n")).toContain(`bad${TITLE}key`);
  });
});
