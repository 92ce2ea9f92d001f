import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { cliPath, type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";

const fleet = useFleet();

const echo = () => ({ command: process.execPath, args: [fixture("echo.mjs")] });

async function serving(c: PoolClient, id: string, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    async () => (await c.state()).some((s) => s.id === id && s.status === "ready"),
    timeoutMs,
    `${id} to be served`,
  );
}

/** The folder deleted the way `rm -rf` does, and made again with a fresh mcp.json. */
function recreate(h: TestHome, servers: Record<string, unknown>): void {
  rmSync(dirname(h.configPath), { recursive: true, force: true });
  mkdirSync(dirname(h.configPath));
  writeFileSync(h.configPath, JSON.stringify({ mcpServers: servers }));
}

describe("the config watcher", () => {
  it("picks up a new mcp.json when the config folder is deleted and made again, and says it is not watching while the folder is gone", async () => {
    const h = fleet.home();
    h.writeConfig({ a: echo() });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    await serving(c, "a");

    rmSync(dirname(h.configPath), { recursive: true, force: true });
    await waitFor(async () => (await c.status()).config.watching === false, 10_000, "not watching");
    const gone = await c.status();
    expect(gone.config.watchReason).toContain(dirname(h.configPath));
    const text = spawnSync(process.execPath, [cliPath, "status"], { env: h.env, encoding: "utf8" });
    expect(text.stdout).toMatch(/not watching/);

    mkdirSync(dirname(h.configPath));
    writeFileSync(h.configPath, JSON.stringify({ mcpServers: { a: echo(), b: echo() } }));
    await serving(c, "b");
    expect((await c.status()).config.watching).toBe(true);
  });

  it("keeps picking up edits after a reload that followed the folder's deletion", async () => {
    const h = fleet.home();
    h.writeConfig({ a: echo() });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    await serving(c, "a");

    recreate(h, { a: echo(), b: echo() });
    const reloaded = await c.reload();
    expect(reloaded.ok).toBe(true);
    await serving(c, "b");

    h.writeConfig({ a: echo(), b: echo(), later: echo() });
    await serving(c, "later");
    // Twice over: a watcher re-armed once must survive the folder going again.
    recreate(h, { again: echo() });
    await serving(c, "again");
  });
});
