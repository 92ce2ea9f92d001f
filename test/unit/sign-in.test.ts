/**
 * Signing in without I/O: what the pool asks `mcpool login` for after a refusal
 * (step-up: the challenge's scope with what was granted), the bound on sign-ins a server
 * keeps refusing, and the machine-grant settings of a row (validation, `${VAR}`, secrets).
 */
import { describe, expect, it } from "vitest";
import { expandServerConfig } from "../../src/config/placeholders.js";
import { withoutSecrets, type HttpServerConfig } from "../../src/config/rows.js";
import { sameConnection } from "../../src/config/same-connection.js";
import { validateServerConfig } from "../../src/config/validate.js";
import { secretValues } from "../../src/pool/core/secrets.js";
import { MAX_SIGN_INS, SignInLedger, unionScope } from "../../src/pool/auth/sign-in.js";

const row = (auth: HttpServerConfig["auth"]): HttpServerConfig => ({
  id: "svc",
  transport: "http",
  url: "https://mcp.example.com/mcp",
  ...(auth !== undefined ? { auth } : {}),
});

describe("what a sign-in is asked for", () => {
  it("asks for a step-up's scope together with what was granted, and forgets it once a call goes through", () => {
    const logged: string[] = [];
    const ledger = new SignInLedger((line) => logged.push(line));
    ledger.challenged("conf", { status: 401, scope: "mcp:basic", insufficientScope: false });
    expect(ledger.request("conf")).toEqual({ scope: "mcp:basic", attempts: 0 });
    expect(ledger.message("conf")).toBe(
      'server "conf" needs you to sign in with scope "mcp:basic": run `mcpool login conf`',
    );
    ledger.granted("conf", "mcp:basic");
    ledger.signedIn("conf");
    ledger.satisfied("conf", "connect");
    expect(ledger.request("conf")).toBeUndefined();

    ledger.challenged("conf", {
      status: 403,
      scope: "mcp:write",
      resourceMetadataUrl: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
      insufficientScope: true,
      method: "tools/call",
    });
    expect(ledger.request("conf")).toEqual({
      scope: "mcp:write mcp:basic",
      resourceMetadataUrl: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
      insufficientScope: true,
      attempts: 0,
    });
    // A dial after the sign-in does not meet a call's step-up; the call does.
    ledger.signedIn("conf");
    ledger.satisfied("conf", "connect");
    expect(ledger.request("conf")?.attempts).toBe(1);
    ledger.satisfied("conf", "call");
    expect(ledger.request("conf")).toBeUndefined();
    expect(logged).toEqual([]);
  });

  it("stops asking after MAX_SIGN_INS sign-ins refused with the same scope, says so once, and lets --force try again", () => {
    const logged: string[] = [];
    const ledger = new SignInLedger((line) => logged.push(line));
    const refuse = (): void =>
      ledger.challenged("conf", { status: 403, scope: "mcp:admin", insufficientScope: true });
    refuse();
    for (let i = 0; i < MAX_SIGN_INS; i += 1) {
      expect(ledger.request("conf")?.exhausted).toBeUndefined();
      ledger.signedIn("conf");
      refuse();
    }
    expect(ledger.request("conf")).toMatchObject({ attempts: MAX_SIGN_INS, exhausted: true });
    expect(ledger.message("conf")).toContain("mcpool stopped asking");
    expect(ledger.message("conf")).toContain("`mcpool login conf --force`");
    refuse();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(`${MAX_SIGN_INS} sign-ins in a row were refused`);
    // --force is one more sign-in: let through, and bounded again if it fails too.
    ledger.signedIn("conf");
    expect(ledger.request("conf")?.exhausted).toBeUndefined();
    refuse();
    expect(ledger.request("conf")?.exhausted).toBe(true);
    // Another scope is another question: the count starts again.
    ledger.challenged("conf", { status: 403, scope: "mcp:other", insufficientScope: true });
    expect(ledger.request("conf")).toMatchObject({ attempts: 0 });
  });

  it("joins scopes word by word, each once", () => {
    expect(unionScope("a b", "b c")).toBe("a b c");
    expect(unionScope(undefined, undefined)).toBeUndefined();
  });
});

describe("machine-to-machine grants in a row", () => {
  it("accepts a secret or a key, and says what is missing or misplaced without quoting a secret", () => {
    const good = [
      { grant: "client_credentials", clientId: "svc", clientSecret: "${SVC_SECRET}" },
      {
        grant: "client_credentials",
        clientId: "svc",
        privateKeyFile: "/k.pem",
        algorithm: "ES256",
      },
      { grant: "client_credentials", clientId: "svc", privateKey: "${SVC_KEY}" },
      { grant: "authorization_code", clientMetadataUrl: "https://app.example.com/client.json" },
    ] as const;
    for (const auth of good) expect(validateServerConfig(row(auth))).toEqual([]);
    const problems = [
      ...validateServerConfig(row({ grant: "password" } as never)),
      ...validateServerConfig(row({ grant: "client_credentials", clientSecret: "hush-123456" })),
      ...validateServerConfig(
        row({
          grant: "client_credentials",
          clientId: "svc",
          clientSecret: "hush-123456",
          privateKeyFile: "/k",
        }),
      ),
      ...validateServerConfig(
        row({ clientId: "svc", privateKey: "hush-key-123", algorithm: "ES256" }),
      ),
      ...validateServerConfig(row({ clientMetadataUrl: "http://app.example.com/c.json" })),
    ];
    expect(problems).toEqual([
      '`auth.grant` must be one of authorization_code, client_credentials, id-jag; got "password"',
      "`auth.clientSecret` needs the `auth.clientId` it belongs to",
      "`auth.grant` client_credentials needs `auth.clientId`",
      "`auth.grant` client_credentials needs exactly one of `auth.clientSecret`, `auth.privateKey`, `auth.privateKeyFile`",
      '`auth.privateKey` belongs to `"grant": "client_credentials"` or `"id-jag"`',
      '`auth.algorithm` belongs to `"grant": "client_credentials"` or `"id-jag"`',
      "`auth.clientMetadataUrl` must be an https URL (SEP-991 client id)",
    ]);
    expect(problems.join("\n")).not.toContain("hush");
  });

  it("fills `${VAR}` in auth values at dial time, keeps the written row, and redacts both spellings", () => {
    const written = row({
      grant: "client_credentials",
      clientId: "${SVC_ID:-svc}",
      clientSecret: "${SVC_SECRET}",
      scopes: ["${SVC_SCOPE}"],
    });
    const env = { SVC_SECRET: "hush-123456", SVC_SCOPE: "mcp:read" };
    expect(expandServerConfig(written, env)).toEqual(
      row({
        grant: "client_credentials",
        clientId: "svc",
        clientSecret: "hush-123456",
        scopes: ["mcp:read"],
      }),
    );
    expect(written.auth).toMatchObject({ clientSecret: "${SVC_SECRET}" });
    expect(secretValues(written, env)).toEqual(
      expect.arrayContaining(["hush-123456", "${SVC_SECRET}"]),
    );
    const key = row({ grant: "client_credentials", clientId: "svc", privateKey: "${SVC_KEY}" });
    expect(secretValues(key, { SVC_KEY: "-----BEGIN PRIVATE KEY-----x" })).toContain(
      "-----BEGIN PRIVATE KEY-----x",
    );
    expect(withoutSecrets(key)).toEqual(row({ grant: "client_credentials", clientId: "svc" }));
  });

  it("takes an id-jag row (SEP-990) and says what it lacks or what is misplaced without quoting a secret", () => {
    const idJag = {
      grant: "id-jag",
      clientId: "svc",
      clientSecret: "${SVC_SECRET}",
      idToken: "${IDP_ID_TOKEN}",
      idpTokenEndpoint: "https://idp.example.com/oauth2/token",
    } as const;
    const good = [
      idJag,
      { ...idJag, idpClientId: "mcpool", idpClientSecret: "${IDP_SECRET}", scopes: ["mcp:read"] },
      { ...idJag, clientSecret: undefined, privateKeyFile: "/k.pem" },
      { ...idJag, idpTokenEndpoint: "http://127.0.0.1:8080/token" },
    ];
    for (const auth of good) {
      expect(validateServerConfig(row(JSON.parse(JSON.stringify(auth))))).toEqual([]);
    }
    const problems = [
      ...validateServerConfig(row({ grant: "id-jag", clientSecret: "hush-123456" })),
      ...validateServerConfig(
        row({ ...idJag, idToken: "hush-id-token", idpClientSecret: "hush-idp-secret" }),
      ),
      ...validateServerConfig(row({ ...idJag, idpTokenEndpoint: "http://idp.example.com/t" })),
      ...validateServerConfig(
        row({
          grant: "client_credentials",
          clientId: "svc",
          clientSecret: "hush-123456",
          idToken: "hush-id-token",
        }),
      ),
    ];
    expect(problems).toEqual([
      "`auth.clientSecret` needs the `auth.clientId` it belongs to",
      "`auth.grant` id-jag needs `auth.clientId`",
      "`auth.grant` id-jag needs `auth.idToken`",
      "`auth.grant` id-jag needs `auth.idpTokenEndpoint`",
      "`auth.idpClientSecret` needs the `auth.idpClientId` it belongs to",
      "`auth.idpTokenEndpoint` uses plain http to idp.example.com; http is allowed only to loopback (localhost, 127.0.0.0/8, ::1); use https",
      '`auth.idToken` belongs to `"grant": "id-jag"`',
    ]);
    expect(problems.join("\n")).not.toContain("hush");
  });

  it("keeps an id-jag row's ID token and IdP secret out of state and redacts both spellings", () => {
    const written = row({
      grant: "id-jag",
      clientId: "svc",
      clientSecret: "${SVC_SECRET}",
      idToken: "${IDP_ID_TOKEN}",
      idpTokenEndpoint: "https://idp.example.com/token",
      idpClientId: "mcpool",
      idpClientSecret: "${IDP_SECRET}",
    });
    const env = {
      SVC_SECRET: "hush-123456",
      IDP_ID_TOKEN: "eyJ.hush-id.token",
      IDP_SECRET: "hush-idp",
    };
    expect(secretValues(written, env)).toEqual(
      expect.arrayContaining(["${IDP_ID_TOKEN}", "eyJ.hush-id.token", "${IDP_SECRET}", "hush-idp"]),
    );
    expect(withoutSecrets(written)).toEqual(
      row({
        grant: "id-jag",
        clientId: "svc",
        idpTokenEndpoint: "https://idp.example.com/token",
        idpClientId: "mcpool",
      }),
    );
  });

  it("restarts a server whose grant or key changed", () => {
    const a = row({ grant: "client_credentials", clientId: "svc", privateKeyFile: "/a.pem" });
    const b = row({ grant: "client_credentials", clientId: "svc", privateKeyFile: "/b.pem" });
    expect(sameConnection(a, b)).toBe(false);
    expect(sameConnection(a, structuredClone(a))).toBe(true);
  });
});
