/**
 * The issuer checks of a sign-in (MCP 2026-07-28 "Authorization Response
 * Validation", RFC 8414 §3.3, RFC 9207 §2.4): the table of `iss` cases, plain string
 * comparison, and metadata that names another issuer. The conformance auth/iss-* and
 * auth/metadata-issuer-mismatch scenarios run the same through the daemon and `mcpool login`
 * (test/conformance/daemon-auth-suite.test.ts).
 */
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect, it } from "vitest";
import { authorizationCode, checkedIssuer } from "../../src/pool/auth/issuer.js";

const ISSUER = "https://as.example.com";
const query = (fields: Record<string, string>) => new URLSearchParams(fields);
const advertised = { issuer: ISSUER, issInResponses: true };
const unadvertised = { issuer: ISSUER, issInResponses: false };

describe("an authorization response's iss (RFC 9207)", () => {
  it("takes the code when iss is the recorded issuer, advertised or not", () => {
    expect(authorizationCode("s", query({ code: "c1", iss: ISSUER }), advertised)).toBe("c1");
    expect(authorizationCode("s", query({ code: "c2", iss: ISSUER }), unadvertised)).toBe("c2");
  });

  it("proceeds without iss only where the server never said it sends one", () => {
    expect(authorizationCode("s", query({ code: "c3" }), unadvertised)).toBe("c3");
    expect(() => authorizationCode("s", query({ code: "c4" }), advertised)).toThrow(
      /came back without the issuer .* promised to name/,
    );
  });

  it("refuses another issuer, advertised or not, with no normalisation", () => {
    for (const recorded of [advertised, unadvertised]) {
      for (const iss of ["https://evil.example.com", `${ISSUER}/`, "HTTPS://as.example.com"]) {
        expect(() => authorizationCode("s", query({ code: "c", iss }), recorded)).toThrow(
          /came back from issuer .* not "https:\/\/as.example.com"/,
        );
      }
    }
  });

  it("shows no error of a response from another issuer, and the error of the right one", () => {
    const forged = query({ error: "access_denied", error_description: "click here", iss: "x" });
    expect(() => authorizationCode("s", forged, advertised)).toThrow(/^(?!.*click here)/s);
    const refused = query({ error: "access_denied", iss: ISSUER });
    expect(() => authorizationCode("s", refused, advertised)).toThrow(
      /refused the sign-in: access_denied/,
    );
  });
});

describe("authorization server metadata (RFC 8414 §3.3)", () => {
  const state = (fetchedFor: string, issuer: string, prm = true): OAuthDiscoveryState =>
    ({
      authorizationServerUrl: fetchedFor,
      authorizationServerMetadata: {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        response_types_supported: ["code"],
        authorization_response_iss_parameter_supported: true,
      },
      ...(prm ? { resourceMetadata: { resource: "https://mcp.example.com" } } : {}),
    }) as OAuthDiscoveryState;

  it("records the issuer and whether it names itself in responses", () => {
    expect(checkedIssuer(state(ISSUER, ISSUER))).toEqual(advertised);
  });

  it("refuses metadata that names another issuer than it was fetched for", () => {
    expect(() => checkedIssuer(state(ISSUER, "https://other.example.com"))).toThrow(
      /names the issuer "https:\/\/other.example.com"; RFC 8414 requires them to be identical/,
    );
    expect(() => checkedIssuer(state(`${ISSUER}/`, ISSUER))).toThrow(/RFC 8414/);
  });

  it("allows the root slash only on the SDK's origin fallback (no resource metadata)", () => {
    expect(checkedIssuer(state(`${ISSUER}/`, ISSUER, false))).toEqual(advertised);
  });

  it("takes any issuer on the origin fallback, as the SDK client does, with a notice for status", () => {
    const taken = checkedIssuer(state(`${ISSUER}/`, `${ISSUER}/oauth`, false));
    expect(taken).toMatchObject({ issuer: `${ISSUER}/oauth`, issInResponses: true });
    expect(taken?.notice).toMatch(
      /publishes no protected-resource metadata, .* names the issuer "https:\/\/as.example.com\/oauth"/,
    );
  });
});
