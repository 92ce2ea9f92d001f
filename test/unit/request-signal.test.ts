/**
 * A request's signal on the daemon's socket is the request itself (InboundRequest), not an
 * AbortSignal built per call. A request withdrawn, or a connection closed, before
 * the handler reads it still gives the handler an aborted signal, with its reason; its
 * "abort" listeners are called once, as an AbortSignal's are.
 */
import { describe, expect, it } from "vitest";
import { McpPoolError } from "mcpool-client";

import { PeerRequests } from "../../src/daemon/socket/peer-requests.js";
import type { CallSignal } from "../../src/pool/core/types.js";

const gone = new McpPoolError("daemon-unavailable", "the client disconnected");

describe("a request's signal", () => {
  it("is aborted when read after the client withdrew the request", () => {
    const requests = new PeerRequests(() => true);
    const request = requests.begin(7);
    requests.cancel(7);
    expect(request.aborted).toBe(true);
    expect(request.signal.aborted).toBe(true);
    expect(request.signal.reason).toMatchObject({ name: "AbortError" });
  });

  it("is aborted when read after the connection closed, with the close's reason", () => {
    const requests = new PeerRequests(() => true);
    const request = requests.begin(undefined);
    requests.close(gone);
    expect(request.signal.aborted).toBe(true);
    expect(request.signal.reason).toBe(gone);
  });

  it("is aborted for a request that begins after the connection closed", () => {
    const requests = new PeerRequests(() => true);
    requests.close(gone);
    expect(requests.begin(1).signal.reason).toBe(gone);
  });

  it("aborts a signal already read, once, with the first reason", () => {
    const requests = new PeerRequests(() => true);
    const request = requests.begin(3);
    const { signal } = request;
    const reasons: unknown[] = [];
    signal.addEventListener("abort", () => reasons.push(signal.reason));
    requests.cancel(3);
    requests.close(gone);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatchObject({ name: "AbortError" });
  });

  it("is not aborted by a withdrawal of another request, nor after its own ended", () => {
    const requests = new PeerRequests(() => true);
    const first = requests.begin(1);
    const second = requests.begin(2);
    requests.cancel(2);
    requests.end(1, first);
    requests.cancel(1);
    expect(first.signal.aborted).toBe(false);
    expect(second.signal.aborted).toBe(true);
  });

  it("calls each listener once, never one removed or added after the abort, and all of them when one throws", () => {
    const requests = new PeerRequests(() => true);
    const request = requests.begin(5);
    const { signal } = request;
    const heard: string[] = [];
    const removed = () => heard.push("removed");
    signal.addEventListener("abort", () => {
      heard.push("first");
      throw new Error("a listener's own failure");
    });
    signal.addEventListener("abort", removed);
    signal.addEventListener("abort", () => heard.push("last"), { once: true });
    signal.removeEventListener("abort", removed);
    requests.cancel(5);
    requests.close(gone);
    signal.addEventListener("abort", () => heard.push("late"));
    expect(heard).toEqual(["first", "last"]);
  });

  it("is what the pool reads of an AbortSignal: an AbortSignal is a CallSignal too", () => {
    const controller = new AbortController();
    const signal: CallSignal = controller.signal;
    const heard: unknown[] = [];
    signal.addEventListener("abort", () => heard.push(signal.reason));
    controller.abort("why");
    expect(heard).toEqual(["why"]);
  });
});
