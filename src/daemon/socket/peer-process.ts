/**
 * Which process holds the other end of a connection, from the kernel, never from what the
 * peer says: Node has no SO_PEERCRED, so on Linux `ss -xpn` (iproute2) lists every Unix
 * socket with its inode, its peer's inode and the processes holding it, read through
 * sock_diag and /proc as the user; a connection of ours is then named by our fd, its peer's
 * inode, and the process of this user that holds that inode. Where `ss` is missing (macOS,
 * the BSDs, a container without iproute2) nothing is known, and nothing is refused for it.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";

/** A process at the other end of a connection. */
export interface PeerProcess {
  pid: number;
  /** Its command line, cut to COMMAND_CHARS; "" when /proc does not say. */
  command: string;
}

/** Room for a command in a refusal line. */
const COMMAND_CHARS = 80;

/** Bound on one `ss` run, ms: it reads every socket of the machine. */
const SS_TIMEOUT_MS = 10_000;

/** The fd behind a connected socket, where libuv says it (Unix); undefined otherwise. */
export function socketFd(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : undefined;
}

/** `pid`'s command line from /proc, NULs as spaces, cut; "" when it cannot be read. */
export function commandOf(pid: number): string {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0+$/, "");
    const line = text.replaceAll("\0", " ");
    return line.length > COMMAND_CHARS ? `${line.slice(0, COMMAND_CHARS - 1)}…` : line;
  } catch {
    return "";
  }
}

/**
 * One `ss -xpnH` line: `u_str ESTAB 0 0 <local> <inode> <peer> <peer inode> users:((…,pid=N,fd=M),…)`.
 * The local path may hold spaces, so the fields are read from the inode on.
 */
const LINE = /\s(\d+)\s+\S+\s+(\d+)(?:\s+users:\((.*)\))?\s*$/;
const HOLDER = /pid=(\d+),fd=(\d+)/g;

/** What `ss` output says: each inode's peer inode and holders (pid, fd). */
export function parseSs(text: string): {
  peerOf: Map<string, string>;
  holders: Map<string, { pid: number; fd: number }[]>;
} {
  const peerOf = new Map<string, string>();
  const holders = new Map<string, { pid: number; fd: number }[]>();
  for (const line of text.split("\n")) {
    const match = LINE.exec(line);
    if (match === null) continue;
    const [, inode, peer, users] = match as unknown as [string, string, string, string?];
    peerOf.set(inode, peer);
    const found = [...(users ?? "").matchAll(HOLDER)].map((m) => ({
      pid: Number(m[1]),
      fd: Number(m[2]),
    }));
    if (found.length > 0) holders.set(inode, found);
  }
  return { peerOf, holders };
}

/** Runs `ss`; its output, or undefined with why not (missing, failed). */
function runSs(): Promise<{ text?: string; why?: string }> {
  return new Promise((resolve) => {
    execFile(
      "ss",
      ["-xpnH"],
      { maxBuffer: 256 * 1024 * 1024, timeout: SS_TIMEOUT_MS, encoding: "utf8" },
      (error, stdout) => {
        if (error !== null) {
          const code = (error as NodeJS.ErrnoException).code;
          resolve({ why: code === "ENOENT" ? "`ss` (iproute2) is not installed" : error.message });
        } else resolve({ text: stdout });
      },
    );
  });
}

export interface PeerLookup {
  /** Each socket's peer process, where known. */
  owners: Map<Socket, PeerProcess>;
  /** Set when nothing could be known: why. */
  why?: string;
}

/** The process at the other end of each of `sockets` (this process's own connections). */
export async function peerProcesses(sockets: Iterable<Socket>): Promise<PeerLookup> {
  const owners = new Map<Socket, PeerProcess>();
  if (process.platform !== "linux") return { owners, why: "only Linux says who holds a socket" };
  const { text, why } = await runSs();
  if (text === undefined) return { owners, why: why ?? "`ss` said nothing" };
  const { peerOf, holders } = parseSs(text);
  // Our fds' inodes, then their peers' holders.
  const ourInode = new Map<number, string>();
  for (const [inode, list] of holders) {
    for (const { pid, fd } of list) if (pid === process.pid) ourInode.set(fd, inode);
  }
  const commands = new Map<number, string>();
  for (const socket of sockets) {
    const fd = socketFd(socket);
    const inode = fd === undefined ? undefined : ourInode.get(fd);
    const peer = inode === undefined ? undefined : peerOf.get(inode);
    const holder = peer === undefined ? undefined : holders.get(peer)?.[0];
    if (holder === undefined) continue;
    let command = commands.get(holder.pid);
    if (command === undefined) commands.set(holder.pid, (command = commandOf(holder.pid)));
    owners.set(socket, { pid: holder.pid, command });
  }
  return { owners };
}
