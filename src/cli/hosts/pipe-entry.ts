/**
 * The lightest host entry this machine has (issue 20). The daemon speaks MCP on a Unix socket
 * per server (src/bridge/mcp-sockets.ts), so any program that joins stdio to a Unix socket is
 * a bridge: `socat`, OpenBSD `nc -U`, or perl (Debian's Essential perl-base and macOS both
 * ship it) running a one-line relay on its builtin `socket()` — no modules, a few MB. Each is
 * taken only when it is on PATH and, run against the server's socket, answers an MCP
 * `initialize`; else the entry stays `mcpool bridge --server ID`.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { onPath } from "../service/env.js";

export interface PipeEntry {
  /** Which stock tool. */
  tool: "socat" | "nc" | "perl";
  /** Absolute: a host started from a desktop launcher has a PATH of its own. */
  command: string;
  args: string[];
}

/**
 * The relay, one process (a host sees one small perl, not two): connect to the socket named
 * by the argument (AF_UNIX = SOCK_STREAM = 1 on Linux, macOS and the BSDs; the BSDs' address
 * starts with a length byte), then a 4-argument `select` loop on stdin and the socket with
 * sysread/syswrite. `w` writes a whole chunk (syswrite may write part of it: it says how much).
 * Stdin's EOF half-closes the socket and the loop goes on reading the daemon's answers; the
 * socket's EOF (the daemon ended the session) ends it. Builtins only: no module is loaded,
 * and no regular expression either — the first match costs perl ~0.3 MB of RSS, so the
 * BSD test is `index`, not /darwin|bsd/ (P10: 5.22 MB against 4.94, bare perl 4.79).
 */
export const PERL_RELAY =
  'socket(S,1,1,0)or die"mcpool pipe: $!\\n";' +
  'connect(S,index($^O,"darwin")>=0||index($^O,"bsd")>=0?pack("CCa*x",0,1,$ARGV[0]):pack("Sa*x",1,$ARGV[0]))or die"mcpool pipe: $!\\n";' +
  "sub w{my($f,$d)=@_;while(length$d){$n=syswrite($f,$d)//exit;substr($d,0,$n)=''}}" +
  "$i=fileno STDIN;$s=fileno S;" +
  "while(1){$r='';vec($r,$s,1)=1;vec($r,$i,1)=1 if$i>=0;select($r,undef,undef,undef)>0 or exit;" +
  "if($i>=0&&vec($r,$i,1)){if(sysread(STDIN,$d,65536)){w(*S,$d)}else{shutdown(S,1);$i=-1}}" +
  "if(vec($r,$s,1)){sysread(S,$d,65536)or exit;w(*STDOUT,$d)}}";

/** The entries to try, best first, for `socketPath` (bench P10 measures each of them). */
export function pipeCandidates(socketPath: string): { tool: PipeEntry["tool"]; args: string[] }[] {
  return [
    { tool: "socat", args: ["STDIO", `UNIX-CONNECT:${socketPath}`] },
    { tool: "nc", args: ["-U", socketPath] },
    { tool: "perl", args: ["-e", PERL_RELAY, socketPath] },
  ];
}

/** Bound on one check: spawn the tool, connect, initialize, read the answer. */
export const PIPE_CHECK_MS = 5_000;

/** The check's first line, an MCP `initialize` (a test sends it through an entry too). */
export const INITIALIZE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "mcpool-wire-check", version: "0" },
  },
})}\n`;

/** Whether `entry` carries an MCP session: an `initialize` sent through it is answered. */
export function pipeWorks(entry: PipeEntry, timeoutMs = PIPE_CHECK_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(entry.command, entry.args, { stdio: ["pipe", "pipe", "ignore"] });
    let out = "";
    let answered = false;
    const done = (works: boolean): void => {
      answered ||= works;
      clearTimeout(timer);
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      for (const line of out.split("\n").slice(0, -1)) {
        try {
          const message = JSON.parse(line) as { id?: unknown; result?: unknown };
          if (message.id === 1 && message.result !== undefined) done(true);
        } catch {
          // not an answer
        }
      }
    });
    child.stdin.on("error", () => undefined);
    child.once("error", () => done(false));
    // Reaped before the verdict: the check leaves no process behind.
    child.once("close", () => {
      clearTimeout(timer);
      resolve(answered);
    });
    child.stdin.write(INITIALIZE);
  });
}

/**
 * The first stock pipe on `env.PATH` that carries a session to `socketPath`; undefined when
 * there is no socket or no tool works (the caller writes `mcpool bridge`).
 */
export async function findPipeEntry(
  socketPath: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PipeEntry | undefined> {
  if (socketPath === undefined || !existsSync(socketPath)) return undefined;
  for (const { tool, args } of pipeCandidates(socketPath)) {
    const command = onPath(tool, env.PATH ?? "");
    if (command === undefined) continue;
    const entry: PipeEntry = { tool, command, args };
    if (await pipeWorks(entry)) return entry;
  }
  return undefined;
}

/** An entry `mcpool wire` wrote with a pipe: its args name one of the daemon's MCP sockets. */
export function isPipeEntry(args: readonly unknown[]): boolean {
  return args.some((arg) => typeof arg === "string" && /[\\/]mcp[\\/][^\\/]+\.sock$/.test(arg));
}
