/**
 * Setting mcpool up on this machine: `wire HOST` (a host's entries onto the pool), `import`
 * (the hosts' servers into mcp.json), both in the hosts room, and `service` (the daemon at
 * login), in the service room. Each is loaded when its command runs.
 */
import { EXIT } from "../output/exit-codes.js";
import { UsageError } from "../output/usage-error.js";
import { catalogOption, type CatalogFlags, type CommandContext } from "./context.js";

const HOST_ARG = "HOST (claude-desktop, claude-code, cursor, vscode, codex, gemini, …)";

/** `mcpool wire HOST [--write] [--catalog[=auto] [--one-entry]]`. */
export async function wireCommand(
  context: CommandContext<CatalogFlags & { write?: boolean; "one-entry"?: boolean }>,
): Promise<number> {
  const { flags, socketPath } = context;
  const catalog = catalogOption(flags.catalog, flags["catalog-tokens"]);
  const options = {
    host: context.arg(0, HOST_ARG),
    write: flags.write === true,
    json: context.json,
    configPath: context.configPath(),
    ...(socketPath ? { socketPath } : {}),
    ...catalog,
    out: context.out,
    err: context.err,
  };
  if (flags["one-entry"] !== true) return (await import("../hosts/wire.js")).runWire(options);
  if (catalog.catalog === undefined) {
    throw new UsageError(
      "--one-entry goes with --catalog or --catalog=auto: the one entry is the pool's catalogue",
    );
  }
  return (await import("../hosts/one-entry.js")).runWireOneEntry(options);
}

/** `mcpool unwire HOST [--write]`: the pool-wide catalogue entry out, what it replaced back. */
export async function unwireCommand(context: CommandContext<{ write?: boolean }>): Promise<number> {
  return (await import("../hosts/one-entry.js")).runUnwire({
    host: context.arg(0, HOST_ARG),
    write: context.flags.write === true,
    json: context.json,
    configPath: context.configPath(),
    out: context.out,
    err: context.err,
  });
}

/** `mcpool import [--from HOST[,HOST]] [--write]`. */
export async function importCommand(
  context: CommandContext<{ from?: string; write?: boolean }>,
): Promise<number> {
  const { from, write } = context.flags;
  return (await import("../hosts/import.js")).runImport({
    ...(from !== undefined ? { from } : {}),
    write: write === true,
    json: context.json,
    target: context.configPath(),
    out: context.out,
    err: context.err,
  });
}

/** `mcpool service install|uninstall|status [--dry-run]`: exit 2 with no service manager. */
export async function serviceCommand(
  context: CommandContext<{ "dry-run"?: boolean }>,
): Promise<number> {
  const action = context.arg(0, "install, uninstall or status");
  if (action !== "install" && action !== "uninstall" && action !== "status") {
    throw new UsageError(`service: unknown action "${action}"`);
  }
  const { runService, ServiceUnavailableError } = await import("../service/install.js");
  const dryRun = context.flags["dry-run"] === true;
  return runService(action, { dryRun, write: context.say }).catch((error: unknown) => {
    if (!(error instanceof ServiceUnavailableError)) throw error;
    context.err(`mcpool: ${error.message}`);
    return EXIT.badInput;
  });
}
