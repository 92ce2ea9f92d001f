#!/usr/bin/env node
/**
 * The `mcpool` command. The only module allowed to call process.exit. What it accepts and
 * its help are commands.ts's table; what it exits with, output/exit-codes.ts's.
 */
import { writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { parseArgs } from "node:util";
import type { PoolClient } from "mcpool-client";
import { McpPoolError as ClientError } from "mcpool-protocol";
import { resolvePaths } from "../daemon/process/paths.js";
import { VERSION } from "../version.js";
import {
  commandHelpText,
  commandNamed,
  parseOptions,
  usageText,
  type ParsedOptions,
} from "./commands.js";
import { hostFilesHelp, isHostName } from "./hosts/configs.js";
import { EXIT } from "./output/exit-codes.js";
import { endQuietlyOnBrokenPipe, exitWhenFlushed, serveWithoutBrokenPipes } from "./output/exit.js";
import { cell, table } from "./output/format.js";
import { withProgress } from "./output/progress.js";
import { requireServer, stoppedMessage } from "./output/messages.js";
import { UsageError } from "./output/usage-error.js";
import { errorText, terminalText } from "./output/terminal.js";
import { describeText } from "./commands/describe.js";
import { statusText } from "./commands/status.js";

// Subcommands are imported when they run: `serve` is a long-lived process whose memory is
// a product figure (SPEC P4, P7): it needs no bridge, login, import, wire, nor mcpool-client.
export { EXIT } from "./output/exit-codes.js";

interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** Lines for a person pass the terminal sanitiser on their way out (SPEC K1); JSON does not. */
const human = (line: string): string => terminalText(line, { multiline: true });

const io: Io = {
  out: (line) => process.stdout.write(`${human(line)}\n`),
  err: (line) => process.stderr.write(`${human(line)}\n`),
};

/** `--json`: stdout is the document exactly as JSON.stringify wrote it. */
const jsonIo: Io = { out: (line) => process.stdout.write(`${line}\n`), err: io.err };

async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs({
    // `--catalog` alone is `--catalog=on`: parseArgs has no option that takes a value or none.
    args: argv.map((arg) => (arg === "--catalog" ? "--catalog=on" : arg)),
    allowPositionals: true,
    options: parseOptions(),
  });
  // parseArgs files each value by the type parseOptions() gave it: the one ParsedOptions says.
  const values = parsed.values as ParsedOptions;
  const positionals = parsed.positionals;
  const [command, ...rest] = positionals;
  // The bridge ends itself, cleanly, when its host stops reading (bridge.ts); the daemon
  // keeps serving with its log file when whoever read its stderr goes away.
  if (command === "serve") serveWithoutBrokenPipes();
  else if (command !== "bridge") endQuietlyOnBrokenPipe();
  if (values.version) {
    io.out(VERSION);
    return EXIT.ok;
  }
  if (command === undefined && !values.help) {
    // As git does: no command is a mistake, and the list of commands is the answer.
    io.err(usageText());
    return EXIT.badInput;
  }
  if (values.help || command === "help") {
    const asked = command === "help" && values.help !== true ? rest[0] : command;
    if (asked === undefined) io.out(usageText());
    else {
      const found = commandNamed(asked);
      if (!found) throw new UsageError(`unknown command "${asked}"`, true);
      io.out(commandHelpText(found));
      const host = command === "wire" ? rest[0] : undefined;
      if (host !== undefined && isHostName(host)) {
        io.out(
          hostFilesHelp(host, { home: homedir(), platform: process.platform, env: process.env }),
        );
      }
    }
    return EXIT.ok;
  }
  const json = values.json === true;
  const { out } = json ? jsonIo : io;
  const print = (value: unknown, text: () => string): void =>
    out(json ? JSON.stringify(value, null, 2) : text());
  const socketPath = values.socket ?? process.env.MCPOOL_SOCKET;
  const target = (): string => socketPath ?? resolvePaths({}).socketPath;
  const withClient = async <T>(run: (client: PoolClient) => Promise<T>): Promise<T> => {
    const { connect } = await import("mcpool-client");
    const client = await connect({ clientName: `mcpool-cli/${command}`, socketPath: target() });
    try {
      return await run(client);
    } finally {
      await client.close();
    }
  };
  const arg = (index: number, name: string): string => {
    const value = rest[index];
    if (value === undefined) throw new UsageError(`${command} needs ${name}`);
    return value;
  };

  switch (command) {
    case "serve":
      return serve(values.config, values.socket, values.handover);
    case "bridge":
      return (await import("./commands/bridge.js")).runBridgeCommand({
        socketPath: socketPath ?? resolvePaths({}).socketPath,
        ...bridgeScope(values.server, values.servers),
        ...(values.config ? { configPath: values.config } : {}),
        ...(values.http !== undefined ? { httpPort: portOf(values.http) } : {}),
        ...(values.token !== undefined ? { token: values.token } : {}),
        ...catalogOption(values.catalog, values["catalog-tokens"]),
        err: io.err,
      });
    case "wire":
      return (await import("./hosts/wire.js")).runWire({
        host: arg(0, "HOST (claude-desktop, claude-code, cursor, vscode, codex, gemini, …)"),
        write: values.write === true,
        json,
        configPath: values.config ?? process.env.MCPOOL_CONFIG ?? resolvePaths({}).configPath,
        ...(socketPath ? { socketPath } : {}),
        ...catalogOption(values.catalog, values["catalog-tokens"]),
        out,
        err: io.err,
      });
    case "import":
      return (await import("./hosts/import.js")).runImport({
        ...(values.from !== undefined ? { from: values.from } : {}),
        write: values.write === true,
        json,
        target: values.config ?? process.env.MCPOOL_CONFIG ?? resolvePaths({}).configPath,
        out,
        err: io.err,
      });
    case "demo":
      await (await import("./commands/demo.js")).demo(out, { json });
      return EXIT.ok;
    case "echo-server":
      // The server owns stdin and stdout, and ends the process at stdin's end (bin.ts starts
      // it without the CLI; this is the same server for `node dist/cli/main.js`).
      await import("../demo/echo-server-bin.js");
      return new Promise<number>(() => undefined);
    case "status": {
      const lost = await import("./commands/lost-socket.js");
      return withClient(async (client) => {
        const status = await client.status({ resources: true });
        const strays = lost.strays(status.socketPath, status.pid);
        print({ ...status, strays }, () =>
          [statusText(status), ...(strays.length > 0 ? ["", ...lost.strayLines(strays)] : [])].join(
            "\n",
          ),
        );
        return EXIT.ok;
      }).catch((error: unknown) => {
        const d = lost.socketlessDaemon(error, target());
        if (d === undefined) throw error;
        return lost.statusWithoutSocket(d, print, io.err);
      });
    }
    case "top":
      return withClient(async (client) =>
        (await import("./commands/top.js")).top(client, {
          once: values.once === true,
          logFile: logFile(),
          out,
        }),
      );
    case "stats":
      return withClient(async (client) =>
        (await import("./commands/stats.js")).stats(client, {
          ...(values.since !== undefined ? { since: values.since } : {}),
          ...(values.server !== undefined ? { server: values.server } : {}),
          unused: values.unused === true,
          json,
          out,
        }),
      );
    case "hide":
    case "unhide": {
      const id = arg(0, "server ID");
      const tools = rest.slice(1);
      if (tools.length === 0) throw new UsageError(`${command} needs at least one TOOL`);
      const { hideTools } = await import("./commands/stats.js");
      return withClient((client) =>
        hideTools(client, id, tools, { hide: command === "hide", json, out }),
      );
    }
    case "tools":
      return withClient(async (client) => {
        await requireServer(client, values.server);
        const tools = await client.tools(values.server ? { servers: [values.server] } : {});
        print(tools, () =>
          tools.length === 0
            ? "no tools"
            : table(
                ["TOOL", "DESCRIPTION"],
                tools.map((t) => [t.function.name, cell(t.function.description, 80)]),
              ),
        );
        return EXIT.ok;
      });
    case "search": {
      const query = rest.join(" ");
      if (query.trim() === "") throw new UsageError("search needs a QUERY");
      const limit = values.limit === undefined ? undefined : Number(values.limit);
      if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
        throw new UsageError("search --limit must be a whole number > 0");
      }
      return withClient(async (client) => {
        await requireServer(client, values.server);
        const found = await client.search(query, {
          ...(values.server ? { servers: [values.server] } : {}),
          ...(limit !== undefined ? { limit } : {}),
        });
        const rows = found.flatMap((s) =>
          s.tools.map((t) => [t.name, s.id, cell(t.description ?? t.title, 70)]),
        );
        print(found, () =>
          rows.length === 0 ? "no tools match" : table(["TOOL", "SERVER", "DESCRIPTION"], rows),
        );
        return EXIT.ok;
      });
    }
    case "describe": {
      const name = arg(0, "QUALIFIED tool name");
      return withClient(async (client) => {
        const info = await client.describe(name);
        if (!info) throw new ClientError("unknown-tool", `no server offers the tool "${name}"`);
        print(info, () => describeText(info));
        return EXIT.ok;
      });
    }
    case "call": {
      const name = arg(0, "QUALIFIED tool name");
      const { callArguments } = await import("./commands/call.js");
      const input = await callArguments(rest[1], process.stdin);
      return withClient(async (client) => {
        if (json) {
          const raw = await withProgress(`calling ${name}`, () =>
            client.call(name, input, { raw: true }),
          );
          out(JSON.stringify(raw, null, 2));
        } else {
          out(await withProgress(`calling ${name}`, () => client.call(name, input)));
        }
        return EXIT.ok;
      });
    }
    case "login":
    case "logout": {
      const id = arg(0, "server ID");
      const { login, logout } = await import("./commands/login.js");
      const run = command === "login" ? login : logout;
      return run(withClient, id, {
        openBrowser: values["no-browser"] !== true,
        force: values.force === true,
        json,
        out,
        err: io.err,
      });
    }
    case "approve": {
      const id = arg(0, "server ID");
      const { approve } = await import("./commands/approve.js");
      return withClient((client) => approve(client, id, { show: values.show === true, json, out }));
    }
    case "probe": {
      const id = arg(0, "server ID");
      return withClient(async (client) => {
        const state = (await client.state({ secrets: true })).find((s) => s.id === id);
        if (!state) throw new ClientError("unknown-server", `unknown server "${id}"`);
        const result = await withProgress(`probing ${id}`, () => client.probe(state.config));
        print(result, () =>
          result.ok
            ? [
                `${id}: ok, ${result.tools.length} tools`,
                ...result.tools.map((t) => `  ${t.name}`),
              ].join("\n")
            : `${id}: FAILED\n${errorText(result.error ?? "")}`,
        );
        return result.ok ? EXIT.ok : EXIT.failed;
      });
    }
    case "stop":
    case "restart": {
      if (command === "restart" && rest[0] === undefined) {
        const { restartDaemon } = await import("./commands/restart-daemon.js");
        return withClient((client) => restartDaemon(client, { json, out, err: io.err }));
      }
      const id = arg(0, "server ID");
      return withClient(async (client) => {
        if (command === "stop") await client.stop(id);
        else await withProgress(`restarting ${id}`, () => client.reconnect(id));
        print({ ok: true }, () => (command === "stop" ? stoppedMessage(id) : `${id}: restarted`));
        return EXIT.ok;
      });
    }
    case "reload":
      return withClient(async (client) => {
        const config = await withProgress("reloading", () => client.reload());
        print(config, () =>
          config.ok
            ? [
                `reloaded ${config.path}`,
                ...config.problems.map((p) => `problem: ${terminalText(p)}`),
              ].join("\n")
            : `${config.path}: ${config.error}; the last good configuration keeps running`,
        );
        return config.ok ? EXIT.ok : EXIT.badInput;
      });
    case "validate":
      return (await import("./commands/validate.js")).validate(
        rest[0] ?? values.config ?? process.env.MCPOOL_CONFIG ?? resolvePaths({}).configPath,
        { json, out, err: io.err },
      );
    case "logs": {
      const { showLog } = await import("./commands/logs.js");
      return showLog(logFile(), {
        lines: Number(values.n ?? 50),
        follow: values.follow === true,
        ...(values.server !== undefined ? { server: values.server } : {}),
        json,
        out,
      });
    }
    case "shutdown":
      return withClient(async (client) => {
        await client.shutdown();
        print({ ok: true }, () => "the daemon is shutting down");
        return EXIT.ok;
      }).catch(async (error: unknown) => {
        const lost = await import("./commands/lost-socket.js");
        const d = lost.socketlessDaemon(error, target());
        if (d === undefined) throw error;
        return lost.shutdownWithoutSocket(d, print, io.err);
      });
    case "service": {
      const action = arg(0, "install, uninstall or status");
      if (action !== "install" && action !== "uninstall" && action !== "status") {
        throw new UsageError(`service: unknown action "${action}"`);
      }
      const { runService, ServiceUnavailableError } = await import("./service/install.js");
      return runService(action, { dryRun: values["dry-run"] === true, write: io.out }).catch(
        (error: unknown) => {
          if (!(error instanceof ServiceUnavailableError)) throw error;
          io.err(`mcpool: ${error.message}`);
          return EXIT.badInput;
        },
      );
    }
    default:
      throw new UsageError(`unknown command "${command}"`, true);
  }
}

function bridgeScope(
  server: string | undefined,
  servers: string | undefined,
): { server?: string; servers?: string[] } {
  if (server !== undefined && servers !== undefined) {
    throw new UsageError("bridge --server and --servers exclude each other");
  }
  if (server !== undefined) return { server };
  if (servers === undefined) return {};
  const ids = servers.split(",").map((id) => id.trim());
  return { servers: ids.filter((id) => id !== "") };
}

/** `--catalog[=auto]` and `--catalog-tokens N` (SPEC J1–J3). */
function catalogOption(
  mode: string | undefined,
  tokens: string | undefined,
): { catalog?: { mode: "on" | "auto"; tokens?: number } } {
  if (mode === undefined) {
    if (tokens !== undefined) throw new UsageError("--catalog-tokens goes with --catalog=auto");
    return {};
  }
  if (mode !== "on" && mode !== "auto") {
    throw new UsageError(`--catalog takes nothing or =auto, not "${mode}"`);
  }
  if (tokens === undefined) return { catalog: { mode } };
  const budget = Number(tokens);
  if (!Number.isInteger(budget) || budget < 0) {
    throw new UsageError(`--catalog-tokens takes a number of tokens, not "${tokens}"`);
  }
  return { catalog: { mode, tokens: budget } };
}

function portOf(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`bridge --http takes a port number, not "${value}"`);
  }
  return port;
}

/** The daemon's log file, where `logs` and `top` read it. */
function logFile(): string {
  return `${resolvePaths({}).logDir}/mcpool.log`;
}

/** LISTEN_FDS for this process: systemd socket activation hands the socket over as fd 3. */
function inheritedListenFd(): number | undefined {
  const fds = Number(process.env.LISTEN_FDS);
  const pid = Number(process.env.LISTEN_PID);
  if (!(fds >= 1) || (process.env.LISTEN_PID !== undefined && pid !== process.pid))
    return undefined;
  return 3;
}

/**
 * A daemon an agent started is not that agent's child (client/src/dial.ts): it says how it
 * ended, if it ends without serving, in the file MCPOOL_LAUNCH_STATUS names — its exit
 * code, 0 when another daemon held the lock. Never seen by its children.
 */
function launchStatus(): { serving(): void } {
  const file = process.env.MCPOOL_LAUNCH_STATUS;
  delete process.env.MCPOOL_LAUNCH_STATUS;
  let serving = false;
  if (file) {
    process.once("exit", (code) => {
      if (serving) return;
      try {
        writeFileSync(file, String(code), { flag: "wx", mode: 0o600 });
      } catch {
        // The starter's bound tells it instead.
      }
    });
  }
  return { serving: () => void (serving = true) };
}

/** Set before anything can fail: a bad flag fails a launched daemon too. */
const launched = launchStatus();

async function serve(
  configPath: string | undefined,
  socketPath: string | undefined,
  handover: string | undefined,
): Promise<number> {
  const listenFd = inheritedListenFd();
  const { joinPredecessor, successorCommand } = await import("./commands/handover.js");
  const { startFronts } = await import("./commands/serve-fronts.js");
  let fronts: Awaited<ReturnType<typeof startFronts>>;
  // Started by `mcpool restart`: the old daemon's snapshot before anything else.
  const predecessor = handover === undefined ? undefined : await joinPredecessor(handover);
  // Children must never see these; the pool strips them too, this keeps them out of our own env.
  for (const name of ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"]) delete process.env[name];
  let stopRequested: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  const { createDaemon } = await import("../daemon/daemon.js");
  const daemon = await createDaemon({
    ...(configPath ? { configPath } : {}),
    ...(socketPath ? { socketPath } : {}),
    ...(listenFd !== undefined ? { listenFd } : {}),
    envFile: true,
    handlesSignals: true,
    onShutdownRequested: () => stopRequested(),
    ...(predecessor ? { predecessor } : {}),
    successor: (fdCount) => successorCommand(fdCount, { configPath, socketPath }),
    onHandingOver: async (phase) => {
      if (phase === "hold") {
        await fronts?.close();
        fronts = undefined;
      } else fronts ??= await startFronts(daemon, io.err);
    },
  });
  // Before start: once the daemon's record says it takes SIGUSR1, it must (a signal with no
  // listener would open Node's inspector instead). It re-creates the socket, as tmux does.
  const renew = (): void => {
    daemon.renew("SIGUSR1").catch(() => undefined);
  };
  process.on("SIGUSR1", renew);
  const result = await daemon.start();
  if (!result.started) {
    process.off("SIGUSR1", renew);
    if ("handedBack" in result) {
      io.err(`mcpool: did not take over: ${result.handedBack}`);
      return EXIT.failed;
    }
    return (await import("./commands/lost-socket.js")).serveGaveWay(
      daemon.paths.socketPath,
      result.holderPid,
      io.err,
    );
  }
  launched.serving();
  // Before the fronts start: a SIGTERM meanwhile must stop the daemon, not kill it outright
  // (which would leave what its children started that left their group).
  process.on("SIGTERM", () => stopRequested());
  process.on("SIGINT", () => stopRequested());
  process.on("SIGHUP", () => {
    daemon.reload().catch(() => undefined);
  });
  fronts = await startFronts(daemon, io.err);
  await stopped;
  await fronts?.close();
  await daemon.stop();
  return EXIT.ok;
}

/** The pool's refusals that mean the input named nothing there or did not fit: exit 2. */
const BAD_INPUT_CODES: ReadonlySet<string> = new Set([
  "invalid-arguments",
  "unknown-server",
  "unknown-tool",
]);

/** Says what went wrong; the exit code that means it. */
function failure(error: unknown): number {
  if (
    error instanceof UsageError ||
    (error as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION"
  ) {
    io.err(`mcpool: ${(error as Error).message}`);
    if (error instanceof UsageError && error.showUsage) io.err(`\n${usageText()}`);
    return EXIT.badInput;
  }
  if (error instanceof ClientError) {
    io.err(`mcpool: ${errorText(error.message)}`);
    if (error.code === "daemon-unavailable") {
      io.err("is the daemon running? start it with `mcpool serve` or `mcpool service install`");
      return EXIT.notRunning;
    }
    return BAD_INPUT_CODES.has(error.code) ? EXIT.badInput : EXIT.failed;
  }
  io.err(`mcpool: ${errorText(error instanceof Error ? error.message : String(error))}`);
  return EXIT.failed;
}

// Never process.exit() straight away: a pipe may not have taken the output yet (F9).
void main(process.argv.slice(2)).then(exitWhenFlushed, (error: unknown) =>
  exitWhenFlushed(failure(error)),
);
