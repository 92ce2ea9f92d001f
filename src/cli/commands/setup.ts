/**
 * Setting mcpool up on this machine: `wire HOST` (a host's entries onto the pool), `import`
 * (the hosts' servers into mcp.json), both in the hosts room, and `service` (the daemon at
 * login), in the service room. Each is loaded when its command runs.
 */
import { EXIT } from "../output/exit-codes.js";
import { UsageError } from "../output/usage-error.js";
import { catalogOption, type CatalogFlags, type CommandContext } from "./context.js";

/** `mcpool wire HOST [--write] [--catalog[=auto]]`. */
export async function wireCommand(
  context: CommandContext<CatalogFlags & { write?: boolean }>,
): Promise<number> {
  const { flags, socketPath } = context;
  return (await import("../hosts/wire.js")).runWire({
    host: context.arg(0, "HOST (claude-desktop, claude-code, cursor, vscode, codex, gemini, …)"),
    write: flags.write === true,
    json: context.json,
    configPath: context.configPath(),
    ...(socketPath ? { socketPath } : {}),
    ...catalogOption(flags.catalog, flags["catalog-tokens"]),
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
