/**
 * What `serve` needs for a hand-over (src/daemon/handover/README.md): the command that starts
 * the new daemon from the installed code, and, in that new daemon, the old one's snapshot.
 */
import { joinPredecessor as join, type Predecessor } from "../../daemon/handover/predecessor.js";
import { UsageError } from "../output/usage-error.js";

/** `--handover N`: N descriptors from fd 4 on, read from the old daemon on fd 3. */
export function joinPredecessor(count: string): Promise<Predecessor> {
  const fds = Number(count);
  if (!Number.isSafeInteger(fds) || fds < 1) {
    throw new UsageError(
      `--handover takes the number of descriptors passed (1 or more), not "${count}"`,
    );
  }
  return join(fds);
}

/**
 * The new daemon: this node, running the installed `main.js` as this one was started (after
 * `npm install -g`, that path holds the new version), with the same --config and --socket.
 */
export function successorCommand(
  fdCount: number,
  given: { configPath: string | undefined; socketPath: string | undefined },
): { command: string; args: string[] } {
  const main = process.argv[1];
  if (main === undefined) throw new Error("this process was not started from a script");
  return {
    command: process.execPath,
    args: [
      main,
      "serve",
      "--handover",
      String(fdCount),
      ...(given.configPath !== undefined ? ["--config", given.configPath] : []),
      ...(given.socketPath !== undefined ? ["--socket", given.socketPath] : []),
    ],
  };
}
