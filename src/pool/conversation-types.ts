/**
 * The public shapes of per-conversation servers (SPEC B9): counts, reports and the answers
 * of terminate() and listings. Plain data the daemon sends over its socket unchanged, so
 * they are the wire's, declared once in mcpool-protocol; none of them carries an identity
 * value, a session id, an argument or a result.
 */
export type {
  ConversationEndReason,
  ConversationEvent,
  ConversationIdentity,
  ConversationLimit,
  ConversationSelector,
  ConversationServerStats,
  ConversationStats,
  ConversationTools,
  SessionEndOutcome,
  TerminateResult,
} from "mcpool-protocol";
// The row's options are the config's own; the protocol's copies are checked against them
// in test/types/wire-shapes.ts.
export type { ConversationRowOptions, SessionMode, ShareNames } from "../config/conversation.js";
