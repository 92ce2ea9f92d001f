/**
 * A stdio entry that serves 2026-07-28 hosts (the lean `mcpool bridge`, the perl pipe: the
 * daemon's MCP socket behind them) put behind the modern Streamable HTTP binding, so the
 * HTTP-only conformance runner can drive it at 2026-07-28. The binding itself (statuses,
 * `Mcp-Method`/`Mcp-Name` headers, envelope checks, per-request streams, the
 * `subscriptions/listen` stream) is SDK v2's `createMcpHandler`, with a low-level v2 Server
 * per request whose every method is the entry's: each request is written to one spawned
 * entry as it came (its `_meta` envelope, `inputResponses` and `requestState` included) and
 * the entry's answer returned as it is (an `input_required` with the entry's own state, cache
 * hints), its error as the same code, message and data. What the runner tests is what the
 * entry answered; only the framing is the SDK's. The entry's `server/discover` is asked once
 * and advertised as the relay's; its listen stream is opened once and fanned out. Host and
 * Origin are checked as the bridge's own HTTP checks them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import {
  createMcpHandler,
  ProtocolError,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { loopbackRequest } from "../../src/bridge/fronts/http.js";
import { stringEnv } from "./bridge.js";
import { alive, waitFor } from "./processes.js";
import type { StdioEntry } from "./stdio-over-http.js";

const VERSION = "2026-07-28";
const METHODS = [
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
] as const;

interface Answer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** One spawned entry, spoken to line by line. */
class Entry {
  readonly child: ChildProcess;
  readonly #pending = new Map<number, (answer: Answer) => void>();
  readonly #progress = new Map<unknown, ServerContext>();
  #next = 1;
  onNotification:
    ((message: { method: string; params?: Record<string, unknown> }) => void) | undefined;

  constructor(entry: StdioEntry, log: (line: string) => void) {
    this.child = spawn(entry.command, entry.args, {
      stdio: ["pipe", "pipe", "pipe"],
      ...(entry.env ? { env: stringEnv(entry.env) } : {}),
    });
    this.child.stderr!.on("data", (chunk: Buffer) => log(chunk.toString().trimEnd()));
    let buffered = "";
    this.child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      let at: number;
      while ((at = buffered.indexOf("\n")) !== -1) {
        const line = buffered.slice(0, at).trim();
        buffered = buffered.slice(at + 1);
        if (line !== "") this.#received(JSON.parse(line) as Record<string, unknown>);
      }
    });
  }

  #received(message: Record<string, unknown>): void {
    if (typeof message.method === "string" && message.id === undefined) {
      const params = message.params as Record<string, unknown> | undefined;
      const ctx = this.#progress.get(params?.progressToken);
      if (message.method === "notifications/progress" && ctx !== undefined) {
        void ctx.mcpReq.notify(message as never).catch(() => undefined);
        return;
      }
      this.onNotification?.(message as never);
      return;
    }
    const resolve = this.#pending.get(message.id as number);
    if (resolve === undefined) return;
    this.#pending.delete(message.id as number);
    resolve(message as Answer);
  }

  request(method: string, params: Record<string, unknown>, ctx?: ServerContext): Promise<Answer> {
    const id = this.#next++;
    const token = (params._meta as Record<string, unknown> | undefined)?.progressToken;
    if (ctx !== undefined && token !== undefined) this.#progress.set(token, ctx);
    const answered = new Promise<Answer>((resolve) => this.#pending.set(id, resolve));
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return answered.finally(() => {
      if (token !== undefined) this.#progress.delete(token);
    });
  }
}

const ENVELOPE = (capabilities: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "conformance-relay", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": capabilities,
});

export async function modernStdioOverHttp(
  entry: StdioEntry,
  log: (line: string) => void = () => undefined,
): Promise<{ url: string; close(): Promise<void> }> {
  const child = new Entry(entry, log);
  const discovered = await child.request("server/discover", { _meta: ENVELOPE({}) });
  if (discovered.result === undefined) {
    throw new Error(`the entry did not answer server/discover: ${JSON.stringify(discovered)}`);
  }
  const {
    capabilities = {},
    instructions,
    _meta,
  } = discovered.result as {
    capabilities?: Record<string, unknown>;
    instructions?: string;
    _meta?: Record<string, unknown>;
  };
  const info = (_meta?.["io.modelcontextprotocol/serverInfo"] as {
    name: string;
    version: string;
  }) ?? { name: "entry", version: "0" };

  const forward =
    (method: string) =>
    async (request: { params?: Record<string, unknown> }, ctx: ServerContext): Promise<never> => {
      const state = ctx.mcpReq.requestState();
      const params = {
        ...request.params,
        _meta: { ...ctx.mcpReq._meta, ...(ctx.mcpReq.envelope as Record<string, unknown>) },
        ...(ctx.mcpReq.inputResponses !== undefined
          ? { inputResponses: ctx.mcpReq.inputResponses }
          : {}),
        ...(typeof state === "string" ? { requestState: state } : {}),
      };
      const answer = await child.request(method, params, ctx);
      if (answer.error !== undefined) {
        throw new ProtocolError(answer.error.code, answer.error.message, answer.error.data);
      }
      return answer.result as never;
    };
  const handler = createMcpHandler(
    () => {
      const server = new Server(info, {
        capabilities: capabilities as never,
        ...(instructions !== undefined ? { instructions } : {}),
      });
      for (const method of METHODS) {
        const offered =
          method.startsWith("tools/") ||
          capabilities[method.startsWith("completion") ? "completions" : method.split("/")[0]!] !==
            undefined;
        if (offered) server.setRequestHandler(method, forward(method) as never);
      }
      return server;
    },
    { legacy: "reject" },
  );

  // One listen stream on the entry, for every change, fanned out to the runner's streams.
  child.onNotification = (message) => {
    if (message.method === "notifications/tools/list_changed") handler.notify.toolsChanged();
    else if (message.method === "notifications/prompts/list_changed")
      handler.notify.promptsChanged();
    else if (message.method === "notifications/resources/list_changed") {
      handler.notify.resourcesChanged();
    }
  };
  void child.request("subscriptions/listen", {
    _meta: ENVELOPE({}),
    notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
  });

  const http = createServer(async (req, res) => {
    // The bridge's own Host/Origin check (src/bridge/fronts/http.ts), as the legacy relay has it.
    if (!loopbackRequest(req.headers)) {
      res.writeHead(403, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Forbidden" } }),
      );
      return;
    }
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
        else if (Array.isArray(value)) for (const one of value) headers.append(name, one);
      }
      const gone = new AbortController();
      res.once("close", () => gone.abort());
      const hasBody = req.method !== "GET" && req.method !== "HEAD" && body.length > 0;
      const response = await handler.fetch(
        new Request(`http://${req.headers.host}${req.url}`, {
          method: req.method ?? "GET",
          headers,
          signal: gone.signal,
          ...(hasBody ? { body } : {}),
        }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body === null) res.end();
      else Readable.fromWeb(response.body as WebReadableStream<Uint8Array>).pipe(res);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    }
  });
  // An idle connection is the runner's to close, as with the bridge's own HTTP front.
  http.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      await handler.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      child.child.stdin!.end();
      const pid = child.child.pid;
      if (pid !== undefined) {
        await waitFor(() => !alive(pid), 10_000, "the entry to exit").catch(() => {
          child.child.kill("SIGKILL");
        });
      }
    },
  };
}
