/**
 * Modern (2026-07-28) requests to the HTTP bridge (http.ts routes them here once its Host,
 * Origin, token and path checks passed): each POST is one request with no session, answered
 * by the SDK v2 handler of the bridge's modern side (modern.ts) — as JSON, or as an SSE
 * stream when notifications come before the answer or the request is a
 * `subscriptions/listen`. Node's request and response are bridged to the fetch API here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Bridge } from "./bridge-server.js";

export interface ModernHttp {
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  close(): Promise<void>;
}

/** The modern face of one HTTP bridge: every modern request in one conversation. */
export async function modernHttp(bridge: Bridge): Promise<ModernHttp> {
  const handler = (await bridge.modern()).httpHandler();
  return {
    async handle(req, res, body) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
        else if (Array.isArray(value)) for (const one of value) headers.append(name, one);
      }
      // A host that goes away ends its request (and a listen stream) upstream too.
      const gone = new AbortController();
      res.once("close", () => gone.abort());
      const request = new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
        method: "POST",
        headers,
        signal: gone.signal,
      });
      const response = await handler.fetch(request, { parsedBody: body });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body === null) {
        res.end();
        return;
      }
      const stream = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
      stream.on("error", () => res.destroy());
      stream.pipe(res);
    },
    close: () => handler.close(),
  };
}
