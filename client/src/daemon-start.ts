/**
 * What an auto-started daemon is started as: the `mcpool` CLI this client belongs
 * to, and the environment the service would have, never the starting agent's. An agent's
 * variables (its API keys, its session tokens) would otherwise reach every server the
 * daemon spawns, and through them every other agent. Secrets for `${VAR}` placeholders go
 * in the daemon's env file (`~/.config/mcpool/env`), which the daemon reads itself.
 */
import { existsSync, readFileSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Names kept from the starting process: what a service manager's environment holds. */
const KEPT = new Set(["PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "TZ"]);
/** Prefixes kept likewise: the XDG directories, the locale, mcpool's own settings. */
const KEPT_PREFIXES = ["XDG_", "LC_", "MCPOOL_"];

/**
 * The environment of a daemon started from `env`: only {@link KEPT} and
 * {@link KEPT_PREFIXES}, `MCPOOL_SOCKET` set to `socketPath`. PATH is the starting
 * process's, with this Node's directory first when it lacks it (as `mcpool service
 * install` writes it), so that rows run with `npx` find the Node they came with.
 */
export function daemonEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  socketPath: string,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (KEPT.has(name) || KEPT_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      kept[name] = value;
    }
  }
  const nodeDir = dirname(process.execPath);
  const path = (kept.PATH ?? "").split(delimiter).filter((entry) => entry !== "");
  if (!path.includes(nodeDir)) path.unshift(nodeDir);
  kept.PATH = path.join(delimiter);
  kept.MCPOOL_SOCKET = socketPath;
  return kept;
}

/**
 * The argv that starts the daemon when `autoStartCommand` is not given: the bin of the
 * `mcpool` package this client belongs to — the nearest of the client's ancestors that is
 * that package (a global `npm install -g mcpool` bundles the client, a checkout holds it as
 * a workspace) or has it in its `node_modules` (installed beside the client in an agent's
 * project) — run with this Node; else `mcpool serve` from PATH.
 */
export function defaultDaemonCommand(): string[] {
  const bin = ownMcpoolBin(dirname(fileURLToPath(import.meta.url)));
  return bin === undefined ? ["mcpool", "serve"] : [process.execPath, bin, "serve"];
}

/**
 * The `mcpool` bin of the nearest ancestor of `dir` that is the `mcpool` package or holds it
 * in its `node_modules`.
 */
function ownMcpoolBin(dir: string): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    // The package itself, then one installed beside the client (`node_modules/mcpool`).
    for (const root of [current, join(current, "node_modules", "mcpool")]) {
      const bin = mcpoolBin(join(root, "package.json"));
      const file = bin === undefined ? undefined : resolve(root, bin);
      if (file !== undefined && existsSync(file)) return file;
    }
    if (dirname(current) === current) return undefined;
  }
}

function mcpoolBin(manifest: string): string | undefined {
  try {
    const json = JSON.parse(readFileSync(manifest, "utf8")) as {
      name?: unknown;
      bin?: unknown;
    };
    if (json.name !== "mcpool") return undefined;
    const bin =
      typeof json.bin === "string" ? json.bin : (json.bin as Record<string, unknown>)?.mcpool;
    return typeof bin === "string" && !isAbsolute(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}
