/**
 * Warm swap on edit: when a row's connection fields change while its server is live,
 * the new child starts beside the old one, which keeps answering; once the new one is
 * ready, new calls go to it and the old one retires after its calls in flight. No call
 * waits for the new child's start. A new child that fails to start leaves the old one
 * serving, with the failure on the entry (status, log) until the next edit or reconnect.
 * The swap itself is ServerEntry's; what decides and says it lives here.
 */
import { isConversationRow } from "../../config/conversation.js";
import { isEnabled, type McpServerConfig } from "../../config/rows.js";

/**
 * Whether an edit to `row` swaps its live connection warm. A disabled row closes instead,
 * and a conversation row's clients belong to their conversations, not to the entry.
 */
export function swapsWarm(row: McpServerConfig): boolean {
  return isEnabled(row) && !isConversationRow(row);
}

/** The log line of a swap that starts (the entry's server log adds the id). */
export function swapStartedMessage(): string {
  return "its connection changed; starting the new one while the old one serves";
}

export function swapFailedMessage(id: string, cause: string): string {
  return `server "${id}": the edited configuration did not start, so the previous one keeps serving: ${cause}`;
}
