/**
 * A host that writes an entry's stdin line by line and keeps every line the entry writes to
 * its stdout, in order: for tests that look at the exact bytes a host is sent.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { binPath, bridgeCommand, stringEnv, type BridgePath } from "./bridge.js";
import type { TestHome } from "./daemon.js";
import { waitFor } from "./processes.js";

/** A host on an entry's stdio: what it writes, the lines it is answered, in order. */
export interface RawHost {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  /** The first `count` lines, once there are that many. */
  next(count: number): Promise<string[]>;
}

/** A JSON-RPC message framed as a line. */
export const line = (message: object): string => `${JSON.stringify(message)}\n`;

/** The bridge's arguments for a scope: a server's id, `@pool`, `@catalog`. */
const scopeArgs = (scope: string): string[] =>
  scope === "@pool" ? [] : scope === "@catalog" ? ["--catalog"] : ["--server", scope];

/** A host on `home`'s `scope` through entry `via` (`bin`: the mcpool it runs). */
export function rawHost(home: TestHome, via: BridgePath, scope = "echo", bin = binPath): RawHost {
  const entry = bridgeCommand(home, [...scopeArgs(scope), "--socket", home.socketPath], via);
  if (bin !== binPath) entry.args[0] = bin;
  const child = spawn(entry.command, entry.args, { env: stringEnv(home.env) });
  const lines: string[] = [];
  let rest = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on("data", (chunk: Buffer) => {
    rest += chunk.toString();
    let at = rest.indexOf("\n");
    while (at !== -1) {
      lines.push(rest.slice(0, at + 1));
      rest = rest.slice(at + 1);
      at = rest.indexOf("\n");
    }
  });
  return {
    child,
    lines,
    async next(count) {
      await waitFor(() => lines.length >= count, 30_000, `${count} lines (${stderr})`);
      return lines.slice(0, count);
    },
  };
}
