/**
 * What a server's MCP-socket session was asked first and answered, recorded for a cold entry
 * (src/bridge/lean/cold-answers.ts).
 */
import type { Socket } from "node:net";
import { StringDecoder } from "node:string_decoder";
import { OpeningRecorder, type Opening } from "../lean/cold-answers.js";
import type { Sending } from "./answers-apart.js";

/**
 * Feeds an OpeningRecorder the host's lines as they come (the socket's bytes, as the host
 * wrote them) and the session's messages as its transport wrote them.
 */
export function recordOpening(
  socket: Socket,
  transport: Sending,
  learnt: (opening: Opening) => void,
): void {
  const recorder = new OpeningRecorder(learnt);
  const decoder = new StringDecoder("utf8");
  let rest = "";
  const read = (chunk: Buffer): void => {
    rest += decoder.write(chunk);
    let at = rest.indexOf("\n");
    while (at !== -1) {
      recorder.hostLine(rest.slice(0, at));
      rest = rest.slice(at + 1);
      at = rest.indexOf("\n");
    }
  };
  socket.on("data", read);
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    recorder.sent(JSON.stringify(message));
  };
}
