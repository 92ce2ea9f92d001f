/**
 * The public shapes of per-conversation servers: counts, reports and the answers
 * of terminate() and listings. Plain data the daemon sends over its socket unchanged, so
 * they are the wire's, declared once in mcpool-protocol; none of them carries an identity
 * value, a session id, an argument or a result.
 */
export type {
  ConversationEndReason,
  ConversationEvent,
  ConversationIdentity,
  ConversationLimit,
  ConversationRowOptions,
  ConversationSelector,
  ConversationServerStats,
  ConversationStats,
  ConversationTools,
  SessionEndOutcome,
  SessionMode,
  ShareNames,
  TerminateResult,
} from "mcpool-protocol";
