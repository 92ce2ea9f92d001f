/**
 * A calling agent: connects to the daemon's socket (argv[2]), makes argv[3] echo calls with
 * argv[4] in flight at once, then says "ready <calls>" on stdout and stays connected until
 * its stdin ends. Used by memory-return.mjs.
 */
import process from "node:process";
import { connect } from "mcpool-client";

const calls = Number(process.argv[3]);
const inFlight = Number(process.argv[4] ?? 4);
const pool = await connect({ socketPath: process.argv[2], clientName: "burst" });
let next = 0;
const worker = async () => {
  while (next < calls) {
    next++;
    await pool.call("echo__echo", { text: "burst" });
  }
};
await Promise.all(Array.from({ length: inFlight }, worker));
process.stdout.write(`ready ${calls}\n`);
process.stdin.resume();
process.stdin.once("end", async () => {
  await pool.close();
  process.exit(0);
});
