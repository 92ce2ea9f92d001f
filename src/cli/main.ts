#!/usr/bin/env node
/**
 * The `mcpool` command. The only module allowed to call process.exit.
 * Exit codes: 0 done, 1 the call or operation failed, 2 bad input, 3 daemon not running.
 */
import { parseArgs } from "node:util";
import { readFile } from "node:fs/promises";
import { connect, McpPoolError as ClientError, type PoolClient } from "mcpool-client";
import { ConfigSyntaxError, parseMcpJson } from "../config/mcp-json.js";
import { createDaemon } from "../daemon/daemon.js";
import { resolvePaths } from "../daemon/paths.js";
import { VERSION } from "../version.js";
import { demo } from "./demo.js";
import { cell, duration, table } from "./format.js";
import { runService } from "./service.js";

export const EXIT = { ok: 0, failed: 1, badInput: 2, notRunning: 3 } as const;

const USAGE = `usage: mcpool <command> [options]

commands:
  serve [--config PATH] [--socket PATH]   run the daemon in the foreground
  status                                  each server's status, pid, uptime, tools, last error
  tools [--server ID]                     the tools agents are offered
  call QUALIFIED [JSON]                   call a tool, print its result
  probe ID                                dial a configured server afresh and list its tools
  stop ID | restart ID                    stop one server / restart it
  reload                                  re-read mcp.json and reconcile now
  validate [FILE]                         check an mcp.json without the daemon
  logs [-n N]                             the daemon's log file
  shutdown                                stop the daemon and every server
  service install|uninstall|status        run the daemon under systemd (Linux) or launchd (macOS)
  demo                                    pool the built-in echo server in this process

options: --json (machine-readable output), --socket PATH, --config PATH
environment: MCPOOL_SOCKET, MCPOOL_CONFIG
exit codes: 0 ok, 1 failed, 2 bad input, 3 daemon not running
`;

class UsageError extends Error {}

interface Io {
  out(line: string): void;
  err(line: string): void;
}

const io: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

async function main(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      json: { type: "boolean" },
      socket: { type: "string" },
      config: { type: "string" },
      server: { type: "string" },
      n: { type: "string", short: "n" },
      "dry-run": { type: "boolean" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "v" },
    },
  });
  const [command, ...rest] = positionals;
  if (values.version) {
    io.out(VERSION);
    return EXIT.ok;
  }
  if (values.help || command === undefined || command === "help") {
    io.out(USAGE.trimEnd());
    return EXIT.ok;
  }
  const json = values.json === true;
  const print = (value: unknown, human: () => string): void =>
    io.out(json ? JSON.stringify(value, null, 2) : human());
  const socketPath = values.socket ?? process.env.MCPOOL_SOCKET;
  const withClient = async <T>(run: (client: PoolClient) => Promise<T>): Promise<T> => {
    const client = await connect({
      clientName: `mcpool-cli/${command}`,
      socketPath: socketPath ?? resolvePaths({}).socketPath,
    });
    try {
      return await run(client);
    } finally {
      await client.close();
    }
  };
  const arg = (index: number, name: string): string => {
    const value = rest[index];
    if (value === undefined) throw new UsageError(`mcpool ${command}: missing ${name}`);
    return value;
  };

  switch (command) {
    case "serve":
      return serve(values.config, values.socket);
    case "demo":
      await demo(io.out);
      return EXIT.ok;
    case "status":
      return withClient(async (client) => {
        const status = await client.status();
        print(status, () => {
          const now = Date.now();
          const lines = [
            `daemon  pid ${status.pid}, version ${status.version}, up ${duration(now - status.startedAt)}, ${status.clients} client(s)`,
            `socket  ${status.socketPath}`,
            `config  ${status.configPath}: ${status.config.ok ? "ok" : `ERROR ${status.config.error ?? ""}${status.config.line !== undefined ? ` (line ${status.config.line}, column ${status.config.column})` : ""}`}`,
            ...status.config.problems.map((p) => `        problem: ${p}`),
            "",
            table(
              ["SERVER", "STATUS", "PID", "UPTIME", "TOOLS", "LAST ERROR"],
              status.servers.map((s) => [
                s.id,
                s.stale ? `${s.status} (stale)` : s.status,
                s.pid !== undefined ? String(s.pid) : "-",
                s.startedAt !== undefined && s.status === "ready"
                  ? duration(now - s.startedAt)
                  : "-",
                String(s.tools.length),
                cell(s.error),
              ]),
            ),
          ];
          return lines.join("\n");
        });
        return EXIT.ok;
      });
    case "tools":
      return withClient(async (client) => {
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
    case "call": {
      const name = arg(0, "QUALIFIED tool name");
      let input: Record<string, unknown> = {};
      if (rest[1] !== undefined) {
        try {
          input = JSON.parse(rest[1]) as Record<string, unknown>;
        } catch (error) {
          throw new UsageError(
            `mcpool call: the arguments are not JSON: ${(error as Error).message}`,
          );
        }
        if (typeof input !== "object" || input === null || Array.isArray(input)) {
          throw new UsageError("mcpool call: the arguments must be a JSON object");
        }
      }
      return withClient(async (client) => {
        if (json) {
          io.out(JSON.stringify(await client.call(name, input, { raw: true }), null, 2));
        } else {
          io.out(await client.call(name, input));
        }
        return EXIT.ok;
      });
    }
    case "probe": {
      const id = arg(0, "server ID");
      return withClient(async (client) => {
        const state = (await client.state({ secrets: true })).find((s) => s.id === id);
        if (!state) throw new ClientError("unknown-server", `unknown server "${id}"`);
        const result = await client.probe(state.config);
        print(result, () =>
          result.ok
            ? [
                `${id}: ok, ${result.tools.length} tools`,
                ...result.tools.map((t) => `  ${t.name}`),
              ].join("\n")
            : `${id}: FAILED\n${result.error ?? ""}`,
        );
        return result.ok ? EXIT.ok : EXIT.failed;
      });
    }
    case "stop":
    case "restart": {
      const id = arg(0, "server ID");
      return withClient(async (client) => {
        if (command === "stop") await client.stop(id);
        else await client.reconnect(id);
        print({ ok: true }, () => `${id}: ${command === "stop" ? "stopped" : "restarted"}`);
        return EXIT.ok;
      });
    }
    case "reload":
      return withClient(async (client) => {
        const config = await client.reload();
        print(config, () =>
          config.ok
            ? [`reloaded ${config.path}`, ...config.problems.map((p) => `problem: ${p}`)].join("\n")
            : `${config.path}: ${config.error}; the last good configuration keeps running`,
        );
        return config.ok ? EXIT.ok : EXIT.badInput;
      });
    case "validate":
      return validate(
        rest[0] ?? values.config ?? process.env.MCPOOL_CONFIG ?? resolvePaths({}).configPath,
        json,
      );
    case "logs": {
      const path = resolvePaths({}).logDir;
      const lines = Number(values.n ?? 50);
      const text = await readFile(`${path}/mcpool.log`, "utf8").catch(() => "");
      io.out(text.trimEnd().split("\n").slice(-lines).join("\n"));
      return EXIT.ok;
    }
    case "shutdown":
      return withClient(async (client) => {
        await client.shutdown();
        print({ ok: true }, () => "the daemon is shutting down");
        return EXIT.ok;
      });
    case "service": {
      const action = arg(0, "install, uninstall or status");
      if (action !== "install" && action !== "uninstall" && action !== "status") {
        throw new UsageError(`mcpool service: unknown action "${action}"`);
      }
      return runService(action, { dryRun: values["dry-run"] === true, write: io.out });
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function validate(path: string, json: boolean): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    io.err(`mcpool validate: cannot read ${path}: ${(error as Error).message}`);
    return EXIT.badInput;
  }
  try {
    const { rows, problems } = parseMcpJson(text);
    if (json)
      io.out(JSON.stringify({ ok: problems.length === 0, rows: rows.length, problems }, null, 2));
    else {
      for (const p of problems) io.out(`${path}:${p.line ?? 1}:${p.column ?? 1}: ${p.message}`);
      io.out(`${rows.length} valid server(s), ${problems.length} problem(s)`);
    }
    return problems.length === 0 ? EXIT.ok : EXIT.badInput;
  } catch (error) {
    if (error instanceof ConfigSyntaxError) {
      if (json)
        io.out(
          JSON.stringify({
            ok: false,
            error: error.message,
            line: error.line,
            column: error.column,
          }),
        );
      else io.out(`${path}:${error.line}:${error.column}: ${error.message}`);
      return EXIT.badInput;
    }
    throw error;
  }
}

/** LISTEN_FDS for this process: systemd socket activation hands the socket over as fd 3. */
function inheritedListenFd(): number | undefined {
  const fds = Number(process.env.LISTEN_FDS);
  const pid = Number(process.env.LISTEN_PID);
  if (!(fds >= 1) || (process.env.LISTEN_PID !== undefined && pid !== process.pid))
    return undefined;
  return 3;
}

async function serve(
  configPath: string | undefined,
  socketPath: string | undefined,
): Promise<number> {
  const listenFd = inheritedListenFd();
  // Children must never see these; the pool strips them too, this keeps them out of our own env.
  for (const name of ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"]) delete process.env[name];
  let stopRequested: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  const daemon = await createDaemon({
    ...(configPath ? { configPath } : {}),
    ...(socketPath ? { socketPath } : {}),
    ...(listenFd !== undefined ? { listenFd } : {}),
    onShutdownRequested: () => stopRequested(),
  });
  const result = await daemon.start();
  if (!result.started) {
    io.err(
      `mcpool: a daemon is already running for ${daemon.paths.socketPath}${result.holderPid ? ` (pid ${result.holderPid})` : ""}`,
    );
    return EXIT.ok;
  }
  process.on("SIGTERM", () => stopRequested());
  process.on("SIGINT", () => stopRequested());
  process.on("SIGHUP", () => {
    daemon.reload().catch(() => undefined);
  });
  await stopped;
  await daemon.stop();
  return EXIT.ok;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION"
    ) {
      io.err(`mcpool: ${(error as Error).message}\n\n${USAGE}`);
      process.exit(EXIT.badInput);
    }
    if (error instanceof ClientError) {
      io.err(`mcpool: ${error.message}`);
      if (error.code === "daemon-unavailable") {
        io.err("is the daemon running? start it with `mcpool serve` or `mcpool service install`");
        process.exit(EXIT.notRunning);
      }
      process.exit(
        error.code === "invalid-arguments" || error.code === "unknown-server"
          ? EXIT.badInput
          : EXIT.failed,
      );
    }
    io.err(`mcpool: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(EXIT.failed);
  },
);
