/**
 * What `mcpool service` needs from the machine besides the templates: the PATH written
 * into the unit or plist, and whether a service manager is there to talk to at all.
 */
import { execFile } from "node:child_process";
import { delimiter, dirname, isAbsolute } from "node:path";
import { onPath } from "../../daemon/process/on-path.js";

export { onPath };

/**
 * Appended to the service's PATH when the installing shell's lacks them, so the basics
 * (`sh`, `env`, Homebrew's tools on a Mac) resolve even from a bare environment.
 */
const BASE_PATH = ["/opt/homebrew/bin", "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/** No line of a unit file or plist can hold one; a newline would start a new setting. */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** A manager that answers takes well under a second; a hung bus should not hang `install`. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * The PATH the service runs with. A service manager starts the daemon with its own short
 * PATH of system directories (launchd's is /usr/bin:/bin:/usr/sbin:/sbin) with none of
 * nvm's, volta's, asdf's, pipx's or Homebrew's directories, so a row whose command is
 * `npx` or `uvx` would fail with ENOENT under the service while it works from a shell.
 * So the installing shell's PATH is written into the unit, in its order, so that each
 * command resolves as it did there; the directory of the node that ran the installer comes
 * first when the shell's PATH lacks it (its `npx` belongs to it), {@link BASE_PATH} last.
 * Relative entries (`.`, an empty one) mean the shell's current directory, which the
 * service does not share; they and duplicates are dropped, as is any entry with a control
 * character, which no unit file can hold.
 */
export function servicePath(node: string, shellPath: string): string {
  const shell = shellPath.split(delimiter);
  const nodeDir = shell.includes(dirname(node)) ? [] : [dirname(node)];
  const entries = [...nodeDir, ...shell, ...BASE_PATH];
  const usable = entries.filter((entry) => isAbsolute(entry) && !CONTROL_CHARACTER.test(entry));
  return [...new Set(usable)].join(delimiter);
}

/**
 * No service manager to install into or ask: the CLI prints the message as one line and
 * exits 2, as for any other request this machine cannot carry out.
 */
export class ServiceUnavailableError extends Error {
  override readonly name = "ServiceUnavailableError";
}

/** The advice every "no service manager" message ends with. */
export const RUN_IT_YOURSELF =
  "run `mcpool serve` under your own supervisor instead (it stays in the foreground)";

/**
 * Throws a {@link ServiceUnavailableError} unless `platform`'s service manager can be
 * reached: `launchctl` on a Mac; on Linux `systemctl` on PATH and a systemd user manager
 * that answers it (none runs in a container, under `su`, or in an SSH session without
 * lingering, and systemctl's own "Failed to connect to bus" says nothing of that).
 */
export async function checkServiceManager(
  platform: NodeJS.Platform,
  pathVar: string = process.env.PATH ?? "",
): Promise<void> {
  if (platform === "darwin") {
    if (onPath("launchctl", pathVar) === undefined) {
      throw new ServiceUnavailableError(
        `launchd is not available here (no \`launchctl\` on PATH); ${RUN_IT_YOURSELF}`,
      );
    }
    return;
  }
  // servicePlan has refused every other platform before this is asked.
  if (platform !== "linux") return;
  const systemctl = onPath("systemctl", pathVar);
  if (systemctl === undefined) {
    throw new ServiceUnavailableError(
      `systemd is not available here (no \`systemctl\` on PATH); ${RUN_IT_YOURSELF}`,
    );
  }
  const reason = await userManagerUnreachable(systemctl);
  if (reason !== undefined) {
    throw new ServiceUnavailableError(
      `no systemd user manager answers for this user (systemctl --user: ${reason}); ${RUN_IT_YOURSELF}`,
    );
  }
}

/** Why `systemctl --user` cannot reach the user manager, or undefined when it can. */
function userManagerUnreachable(systemctl: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      systemctl,
      ["--user", "show", "--property=Version"],
      { timeout: PROBE_TIMEOUT_MS, encoding: "utf8" },
      (error, _stdout, stderr) => {
        if (error === null) return resolve(undefined);
        const said = stderr.trim().split("\n")[0] ?? "";
        resolve(said === "" ? error.message.split("\n")[0] : said);
      },
    );
  });
}
