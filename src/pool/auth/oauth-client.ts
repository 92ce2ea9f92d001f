/**
 * The pool's OAuth code — the stored and machine-grant providers (oauth.ts,
 * auth/machine.ts) and, behind them, the SDK's client/auth.js, auth-extensions.js and
 * shared/auth.js — loads with the first http row or the first sign-in, not with the
 * daemon: a pool of stdio rows never pays for it. This module is the one door
 * to it and imports none of it.
 */
import type { CreateTransport } from "../transport/transport.js";

type OAuthModules = typeof import("./oauth.js") & typeof import("./machine.js");

let loading: Promise<OAuthModules> | undefined;
let loaded: OAuthModules | undefined;

/** The OAuth modules, imported once on first use. */
export function loadOAuth(): Promise<OAuthModules> {
  return (loading ??= Promise.all([import("./oauth.js"), import("./machine.js")]).then(
    ([stored, machine]) => (loaded = { ...stored, ...machine }),
  ));
}

/** The OAuth modules when loaded; undefined before: nothing of them was needed yet. */
export function loadedOAuth(): OAuthModules | undefined {
  return loaded;
}

/**
 * `create` that loads the OAuth code before it makes an http row's transport: the
 * provider the transport context hands out (PoolAuth.provider) is built synchronously,
 * by our transport or by a consumer's own `createTransport`. A stdio row's is made as
 * before, synchronously.
 */
export function withOAuth(create: CreateTransport): CreateTransport {
  return (row, context) =>
    row.transport === "http" ? loadOAuth().then(() => create(row, context)) : create(row, context);
}
