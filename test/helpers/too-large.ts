/** What an answer over the frame cap is refused with, as a test checks it. */
import { expect } from "vitest";

/** The daemon's frame cap, bytes. */
export const CAP = 16 * 1024 * 1024;

/**
 * `error` is the refusal of a `chars`-character answer from `serverId`: `answer-too-large`,
 * every byte counted (the text and its JSON envelope), the size and the cap named, and
 * dropped as the bytes came rather than once held whole.
 */
export function expectTooLarge(error: unknown, serverId: string, chars: number): void {
  const refused = error as {
    code?: string;
    message: string;
    detail?: { bytes?: number; maxFrameBytes?: number; serverId?: string };
  };
  expect(refused).toMatchObject({ code: "answer-too-large", detail: { serverId } });
  const bytes = refused.detail?.bytes;
  expect(bytes).toBeGreaterThan(chars);
  expect(refused.detail?.maxFrameBytes).toBe(CAP);
  expect(refused.message).toContain(`${bytes} bytes`);
  expect(refused.message).toContain(`${CAP}-byte frame cap`);
  expect(refused.message).toMatch(/dropped as it arrived; the tool ran/);
}
