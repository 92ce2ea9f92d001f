/**
 * The wire's shapes are declared once, in mcpool-protocol, and the pool re-exports them.
 * What is left here are the few the protocol still holds a copy of, because their own
 * definition lives in a module that may not import it yet: the config's row and hook types
 * (src/config) and the pool's identity and session-ending types. `npm test` typechecks
 * this file; it fails when a copy and its original differ in any field.
 */
import type * as Wire from "mcpool-protocol";
import type * as Config from "../../src/config/index.js";
import type * as Hooks from "../../src/config/hooks.js";
import type { ConversationRowOptions } from "../../src/config/conversation.js";
import type { ConversationIdentity, ConversationSelector } from "../../src/pool/identity.js";
import type { SessionEndOutcome } from "../../src/pool/session-end.js";

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;

export type WireCopiesMatch = [
  Assert<Equal<Wire.ServerRow, Config.McpServerConfig>>,
  Assert<Equal<Wire.ToolHook, Hooks.ToolHook>>,
  Assert<Equal<Wire.HookContext, Hooks.HookContext>>,
  Assert<Equal<Wire.HookOutcome, Hooks.HookOutcome>>,
  Assert<Equal<Wire.HookEvent, Hooks.HookEvent>>,
  Assert<Equal<Wire.ConversationRowOptions, ConversationRowOptions>>,
  Assert<Equal<Wire.ConversationIdentity, ConversationIdentity>>,
  Assert<Equal<Wire.ConversationSelector, ConversationSelector>>,
  Assert<Equal<Wire.SessionEndOutcome, SessionEndOutcome>>,
];
