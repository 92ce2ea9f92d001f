/**
 * An agent without mcpool: spawns each server of argv[2] (a JSON map of rows) with the
 * SDK, initializes and lists it, says "ready <tools>" on stdout, and holds them until its
 * stdin ends. Used by sharing.mjs.
 */
import process from "node:process";
import { directClient, listAll } from "../lib/direct.mjs";

const servers = JSON.parse(process.argv[2]);
const opened = await Promise.all(Object.values(servers).map((row) => directClient(row, "agent")));
let tools = 0;
for (const { client } of opened) tools += (await listAll(client)).length;
process.stdout.write(`ready ${tools}\n`);
process.stdin.resume();
process.stdin.once("end", async () => {
  await Promise.all(opened.map((o) => o.close()));
  process.exit(0);
});
