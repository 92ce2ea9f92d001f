/**
 * The lock no removal can defeat. On Linux a daemon also binds an abstract-namespace
 * Unix socket, `@mcpool-lock-<hash of uid and socket path>`, for as long as it lives: it has
 * no file to remove, the kernel frees it when the process ends, and a second bind gets
 * EADDRINUSE. So a second daemon for one socket path is refused even after the runtime folder
 * (and the file lock beside the socket) was deleted. Abstract names are shared by every user
 * of a network namespace, so a taken name counts only when its holder is a process of ours:
 * found in `/proc/net/unix` and our own processes' fds, never trusted from what it says.
 * Elsewhere (macOS, the BSDs) there are no abstract sockets and the file lock stands alone.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { createServer, type Server } from "node:net";

/** Only Linux (and Android) have the abstract socket namespace. */
export const HAS_ABSTRACT_SOCKETS = process.platform === "linux" || process.platform === "android";

/** The abstract name for `socketPath` held by `uid`, without the leading NUL. */
export function lockName(socketPath: string, uid: number | undefined = process.getuid?.()): string {
  const hash = createHash("sha256")
    .update(`${uid ?? ""}:${socketPath}`)
    .digest("hex");
  return `mcpool-lock-${hash.slice(0, 24)}`;
}

export type NameLock =
  | { held: true; release(): void }
  /** `holderPid`: the process of ours that holds the name; undefined: not ours (squatted). */
  | { held: false; holderPid: number | undefined };

/** Binds `\0name`; reports who holds it when it is taken. Never throws for a taken name. */
export async function holdName(name: string): Promise<NameLock> {
  // Connections to the lock are not served: it is a name, not a door.
  const server: Server = createServer((socket) => socket.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ path: `\0${name}`, backlog: 1 }, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    return { held: false, holderPid: nameHolder(name) };
  }
  // The daemon's socket keeps the process alive, never this.
  server.unref();
  let released = false;
  return {
    held: true,
    release() {
      if (released) return;
      released = true;
      server.close();
    },
  };
}

/**
 * The pid of a process of ours listening on the abstract `name`: its inode from
 * `/proc/net/unix`, then the process among our own whose fds hold that socket. Undefined when
 * no process of ours holds it (another user's, or one we cannot see).
 */
export function nameHolder(name: string): number | undefined {
  const inode = listeningInode(name);
  if (inode === undefined) return undefined;
  const uid = process.getuid?.();
  const target = `socket:[${inode}]`;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (uid !== undefined && statSync(`/proc/${entry}`).uid !== uid) continue;
      for (const fd of readdirSync(`/proc/${entry}/fd`)) {
        if (readlinkSync(`/proc/${entry}/fd/${fd}`) === target) return Number(entry);
      }
    } catch {
      // Gone, or not ours to read: it holds nothing of ours.
    }
  }
  return undefined;
}

/**
 * `/proc/net/unix`: `Num RefCount Protocol Flags Type St Inode Path`; an abstract path is
 * shown with `@` for its NUL, and Node pads the name to the whole `sun_path` with NULs.
 */
function listeningInode(name: string): string | undefined {
  let table: string;
  try {
    table = readFileSync("/proc/net/unix", "latin1");
  } catch {
    return undefined;
  }
  for (const line of table.split("\n")) {
    const fields = line.trim().split(/\s+/);
    const path = fields[7];
    if (path === undefined || path.replace(/@+$/, "") !== `@${name}`) continue;
    return fields[6];
  }
  return undefined;
}
