/**
 * An agent with mcpool: connects to the daemon's socket (argv[2]), reads the catalog,
 * says "ready <tools>" on stdout, and stays connected until its stdin ends. Used by sharing.mjs.
 */
import process from "node:process";
import { connect } from "mcpool-client";

const pool = await connect({ socketPath: process.argv[2], clientName: "agent" });
const catalog = await pool.catalog();
const tools = catalog.reduce((sum, server) => sum + server.tools.length, 0);
process.stdout.write(`ready ${tools}\n`);
process.stdin.resume();
process.stdin.once("end", async () => {
  await pool.close();
  process.exit(0);
});
