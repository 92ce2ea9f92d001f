/**
 * What a transport's send() returns for a message it has already written: one settled
 * promise shared by every such send, so a sender can tell it apart and watch nothing more.
 */
export const SENT: Promise<void> = Promise.resolve();
