import { describe, expect, it } from "vitest";
import { OpeningRecorder, type Opening } from "../../src/bridge/lean/cold-answers.js";

const request = (id: number, method: string): string =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params: {} });
const answer = (id: number, result: object): string =>
  JSON.stringify({ jsonrpc: "2.0", id, result });

/** What a recorder learnt last from the host's lines and the daemon's answers, in the order given. */
function recorded(steps: readonly ["host" | "sent", string][]): Opening | undefined {
  let last: Opening | undefined;
  const recorder = new OpeningRecorder((opening) => (last = opening));
  for (const [side, text] of steps) {
    if (side === "host") recorder.hostLine(text);
    else recorder.sent(text);
  }
  return last;
}

describe("OpeningRecorder", () => {
  const discover = answer(1, { supportedVersions: ["2026-07-28"] });
  const tools = answer(2, { tools: [] });

  it("records the opening's answer, then the listing's", () => {
    const opening = recorded([
      ["host", request(1, "server/discover")],
      ["host", request(2, "tools/list")],
      ["sent", discover],
      ["sent", tools],
    ]);
    expect(opening?.answer).toBe(discover);
    expect(opening?.lists.map((list) => list.answer)).toEqual([tools]);
  });

  it("keeps a listing answered before the opening (a discovery that waits for children) with it", () => {
    const opening = recorded([
      ["host", request(1, "server/discover")],
      ["host", request(2, "tools/list")],
      ["sent", tools],
      ["sent", discover],
    ]);
    expect(opening?.answer).toBe(discover);
    expect(opening?.lists.map((list) => list.answer)).toEqual([tools]);
  });

  it("records nothing past a request that is neither an opening nor a listing", () => {
    const opening = recorded([
      ["host", request(1, "server/discover")],
      ["host", request(2, "tools/call")],
      ["sent", answer(2, { content: [] })],
      ["sent", discover],
    ]);
    expect(opening).toBeUndefined();
  });
});
