/**
 * Where the daemon's socket is, by default (SPEC D1). The one definition: the daemon, the
 * CLI and every client import it from here, so they cannot disagree.
 */
import { userInfo } from "node:os";
import { isAbsolute, join } from "node:path";

/**
 * `$MCPOOL_SOCKET`, else `$XDG_RUNTIME_DIR/mcpool/mcpool.sock`, else
 * `/tmp/mcpool-<uid>/mcpool.sock`.
 *
 * The last fallback is a fixed `/tmp` path keyed by uid rather than env-paths' temp dir
 * (`os.tmpdir()`, which follows `$TMPDIR`): a daemon started by a service manager and an
 * agent started from a shell often see different `$TMPDIR`s, and must still meet. The
 * daemon creates the directory 0700 and refuses one owned by someone else.
 */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.MCPOOL_SOCKET;
  if (explicit !== undefined && explicit !== "") return explicit;
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime !== undefined && isAbsolute(runtime)) return join(runtime, "mcpool", "mcpool.sock");
  const user = process.getuid?.() ?? userInfo().username;
  return join("/tmp", `mcpool-${user}`, "mcpool.sock");
}
