/**
 * A stdio entry — what a host spawns: the perl pipe `mcpool wire` writes, the lean `mcpool
 * bridge` — put behind Streamable HTTP, so HTTP-only harnesses (the conformance runner) can
 * drive it. A relay at the transport level only: each HTTP session is the bridge's own
 * listener (src/bridge/fronts/http.ts: loopback, Host/Origin checks, sessions, resumability) with a
 * StreamableHTTPServerTransport whose messages go verbatim to a StdioClientTransport spawning
 * the entry, and back. No SDK Server or Client reads them: what the harness sees is what the
 * entry said (only which HTTP stream carries it is chosen here, from the envelope). The two transports close together, and the child is reaped.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Bridge } from "../../src/bridge/legacy/bridge-server.js";
import { listenHttp } from "../../src/bridge/fronts/http.js";
import { stringEnv } from "./bridge.js";
import { alive, waitFor } from "./processes.js";

export interface StdioEntry {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

export interface StdioOverHttp {
  /** `http://127.0.0.1:<port>/mcp`, no token. */
  url: string;
  /** Entries spawned so far (one per HTTP session). */
  readonly spawned: number;
  /** Closes every session, and waits for every entry it spawned to be gone. */
  close(): Promise<void>;
}

/** Bound on an entry's exit once its session closed: stdin EOF, then the SDK's own escalation. */
const ENTRY_EXIT_MS = 10_000;

/** One HTTP session joined to one spawned entry, message for message. */
function relay(entry: StdioEntry, pids: number[], log: (line: string) => void) {
  return {
    async connect(http: StreamableHTTPServerTransport): Promise<void> {
      const stdio = new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        ...(entry.env ? { env: stringEnv(entry.env) } : {}),
        stderr: "pipe",
      });
      stdio.stderr?.on("data", (chunk: Buffer) => log(chunk.toString().trimEnd()));
      let closed = false;
      const closeBoth = (): void => {
        if (closed) return;
        closed = true;
        void stdio.close().catch(() => undefined);
        void http.close().catch(() => undefined);
      };
      // The listener's own onclose (it forgets the session) runs first.
      const listenerClose = http.onclose;
      http.onclose = () => {
        listenerClose?.();
        closeBoth();
      };
      stdio.onclose = closeBoth;
      // The HTTP streams are the relay's to choose, as they are an SDK server's: what the
      // entry says while a request is open (progress, logging, an elicitation) goes on that
      // request's stream, before its answer — on the standalone stream a host could read the
      // answer first and drop the progress. Only the envelope's id and method are looked at.
      const open: RequestId[] = [];
      http.onmessage = (message) => {
        if ("method" in message && "id" in message) open.push(message.id);
        void stdio.send(message).catch(closeBoth);
      };
      stdio.onmessage = (message) => {
        const answer = "id" in message && !("method" in message);
        const at = answer ? open.indexOf(message.id as RequestId) : -1;
        if (at !== -1) open.splice(at, 1);
        const related = answer ? undefined : open.at(-1);
        const options = related === undefined ? undefined : { relatedRequestId: related };
        void http.send(message, options).catch(() => undefined);
      };
      await stdio.start();
      if (stdio.pid !== null) pids.push(stdio.pid);
      await http.start();
    },
  };
}

/** Serves `entry` over Streamable HTTP on 127.0.0.1, one spawned entry per session. */
export async function stdioOverHttp(
  entry: StdioEntry,
  log: (line: string) => void = () => undefined,
): Promise<StdioOverHttp> {
  const pids: number[] = [];
  // listenHttp only ever calls createServer().connect(transport): the relay is that much.
  const bridge = {
    createServer: () => relay(entry, pids, log) as unknown as Server,
    sessions: 0,
    capabilities: {},
    legacyOnly: false,
    close: async () => undefined,
    serve: () => Promise.reject(new Error("the relay serves HTTP sessions only")),
    modern: () => Promise.reject(new Error("the relay serves HTTP sessions only")),
  } satisfies Bridge;
  const http = await listenHttp({ bridge, port: 0, token: null, log });
  return {
    url: http.url,
    get spawned() {
      return pids.length;
    },
    async close() {
      await http.close();
      await waitFor(() => pids.every((pid) => !alive(pid)), ENTRY_EXIT_MS, "the entries to exit");
    },
  };
}
