import { describe, expect, it } from "vitest";
import { causeCode, isUnreachableCode, withCause } from "../../src/pool/core/causes.js";
import { serverLog } from "../../src/pool/core/server-log.js";

/** What undici's fetch throws when nothing listens: the code is two causes down. */
function fetchFailed(code: string): Error {
  const system = Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
  return new TypeError("fetch failed", { cause: system });
}

describe("the cause of a failed fetch", () => {
  it("is found by its code in the cause chain, not in the message", () => {
    expect(causeCode(fetchFailed("ECONNREFUSED"))).toBe("ECONNREFUSED");
    expect(causeCode(new Error("connect ECONNREFUSED 127.0.0.1:9"))).toBeUndefined();
  });

  it("is found in the first attempt of an aggregate, as happy-eyeballs reports one", () => {
    const attempts = new AggregateError([
      Object.assign(new Error("::1"), { code: "ECONNREFUSED" }),
    ]);
    expect(causeCode(new TypeError("fetch failed", { cause: attempts }))).toBe("ECONNREFUSED");
  });

  it("ignores the pool's own kebab-case codes and numeric JSON-RPC codes", () => {
    expect(causeCode({ code: "connect-failed" })).toBeUndefined();
    expect(causeCode({ code: -32000 })).toBeUndefined();
  });

  it("takes refusals, unknown hosts and refused certificates for an unreachable address", () => {
    for (const code of [
      "ECONNREFUSED",
      "ENOTFOUND",
      "CERT_HAS_EXPIRED",
      "ERR_TLS_CERT_ALTNAME_INVALID",
    ])
      expect(isUnreachableCode(code)).toBe(true);
    expect(isUnreachableCode("ENOENT")).toBe(false);
    expect(isUnreachableCode(undefined)).toBe(false);
  });

  it("is named once in the message it is added to", () => {
    expect(withCause("fetch failed", "ENOTFOUND")).toBe(
      "fetch failed (ENOTFOUND: the host name does not resolve)",
    );
    expect(withCause("spawn nope ENOENT", "ENOENT")).toBe("spawn nope ENOENT");
  });
});

describe("a server's log", () => {
  it("prefixes every line with the server's id and hands the id beside it", () => {
    const lines: [string, unknown][] = [];
    const log = serverLog({ info: (message, about) => lines.push([message, about]) }, "echo");
    log.info("connected with 4 tools");
    log.error("not written: the pool's log has no error half");
    expect(lines).toEqual([["mcpool: echo: connected with 4 tools", { server: "echo" }]]);
  });
});
