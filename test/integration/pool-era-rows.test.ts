/**
 * A whole-pool bridge serves a 2026-07-28 opening in that era only while a server in the
 * pool speaks it, and that verdict follows rows a reconcile adds or removes even when they
 * never connect (a lazy row whose era the tools cache knows). With its only 2026-07-28 row
 * removed from mcp.json, the pool's next opening is served as its remaining 2025 server is
 * direct (`server/discover` is "Method not found"); with that row written back, the next
 * opening is served in 2026-07-28 again, the row not started meanwhile.
 */
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { scopeSocket } from "../helpers/bridge.js";
import type { TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const fleet = useFleet();
const BOUND_MS = 30_000;
const DISCOVER = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "server/discover",
  params: {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "modern-host", version: "1.0.0" },
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
})}\n`;

interface Answer {
  result?: unknown;
  error?: { code: number };
}

/** The first line `send` is answered on a stream, parsed. */
function firstAnswer(
  write: (text: string) => void,
  onData: (listener: (chunk: Buffer) => void) => void,
): Promise<Answer> {
  return new Promise((resolve) => {
    let text = "";
    onData((chunk) => {
      text += chunk.toString();
      const at = text.indexOf("\n");
      if (at !== -1) resolve(JSON.parse(text.slice(0, at)) as Answer);
    });
    write(DISCOVER);
  });
}

/** What a fresh session on the pool's MCP socket is answered its `server/discover`. */
async function poolOpening(home: TestHome): Promise<Answer> {
  const socket = connect(scopeSocket(home, []));
  try {
    return await firstAnswer(
      (text) => socket.write(text),
      (listener) => socket.on("data", listener),
    );
  } finally {
    socket.destroy();
  }
}

/** What the 2025 server alone answers a `server/discover` direct: the oracle. */
async function directOpening(): Promise<Answer> {
  const child = spawn(process.execPath, [fixture("echo.mjs")], { stdio: "pipe" });
  try {
    return await firstAnswer(
      (text) => child.stdin.write(text),
      (listener) => child.stdout.on("data", listener),
    );
  } finally {
    child.stdin.end();
    await waitFor(() => !alive(child.pid!), BOUND_MS, "the direct server to exit");
  }
}

describe("a whole-pool bridge's era follows rows that never connect", () => {
  it("serves 2025 once its only 2026-07-28 lazy row is removed, and 2026-07-28 once it is back", async () => {
    const direct = await directOpening();
    expect(direct.error?.code).toBe(-32601);
    const home = fleet.home("mcpool-era-rows-");
    const legacy = { command: process.execPath, args: [fixture("echo.mjs")] };
    const modern = { command: process.execPath, args: [fixture("modern-cached.mjs")], lazy: true };
    home.writeConfig({ legacy, modern });
    await fleet.daemon(home);
    const agent = await fleet.agent(home);
    const modernRow = async () => (await agent.state()).find((s) => s.id === "modern");
    // The lazy row learned (started, listed, stopped): its era is the tools cache's now.
    await waitFor(
      async () => {
        const row = await modernRow();
        return row?.era === "modern" && row.pid === undefined && row.status !== "connecting";
      },
      BOUND_MS,
      "the lazy row's era to be learned",
    );
    expect((await poolOpening(home)).result).toBeDefined();

    home.writeConfig({ legacy });
    await waitFor(async () => (await modernRow()) === undefined, BOUND_MS, "the row removed");
    await waitFor(
      async () => (await poolOpening(home)).error?.code === direct.error?.code,
      BOUND_MS,
      "the pool's opening to be answered as its 2025 server answers it direct",
    );

    home.writeConfig({ legacy, modern });
    await waitFor(
      async () => (await poolOpening(home)).result !== undefined,
      BOUND_MS,
      "the pool's opening to be served in 2026-07-28 again",
    );
    expect((await modernRow())?.pid).toBeUndefined();
  }, 120_000);
});
