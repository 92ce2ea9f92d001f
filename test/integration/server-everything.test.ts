import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpPool, type McpServerConfig } from "../../src/index.js";
import { alive, referenceServer, waitFor } from "../helpers/processes.js";

const everythingBin = referenceServer("server-everything");

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function exercise(row: McpServerConfig): Promise<void> {
  const pool = new McpPool({ clientName: "mcpool-test", log: {}, connectTimeoutMs: 20_000 });
  try {
    await pool.sync([row]);
    const [state] = pool.state();
    expect(state?.status, state?.error).toBe("ready");
    expect(state?.capabilities).toHaveProperty("tools");
    expect(state?.toolsFingerprint).toMatch(/^[0-9a-f]{64}$/);
    const names = pool.tools().map((t) => t.function.name);
    expect(names).toContain("everything__echo");
    expect(names).toContain("everything__get-sum");
    expect(await pool.call("everything__echo", { message: "pooled" })).toBe("Echo: pooled");
    expect(await pool.call("everything__get-sum", { a: 2, b: 3 })).toMatch(/5/);
    const image = await pool.call("everything__get-tiny-image", {});
    expect(image).toMatch(/\[image image\/png, \d+ (B|KB) omitted\]/);
  } finally {
    await pool.close();
  }
}

describe("@modelcontextprotocol/server-everything", () => {
  it("serves its tools through the pool over stdio", async () => {
    await exercise({
      id: "everything",
      transport: "stdio",
      command: process.execPath,
      args: [everythingBin],
    });
  });

  it("probes with the pool's own capabilities, so a probe lists the tools the pool offers", async () => {
    // server-everything offers its sampling and elicitation tools only to clients that declare them.
    const pool = new McpPool({
      clientName: "mcpool-test",
      log: {},
      connectTimeoutMs: 20_000,
      onElicit: () => ({ action: "decline" }),
      onSample: () => {
        throw new Error("no model here");
      },
    });
    try {
      const row: McpServerConfig = {
        id: "everything",
        transport: "stdio",
        command: process.execPath,
        args: [everythingBin],
      };
      await pool.sync([row]);
      const pooled = pool.state()[0]?.tools.map((t) => t.name) ?? [];
      const probed = await pool.probe(row);
      expect(probed.ok, probed.ok ? "" : probed.error).toBe(true);
      if (!probed.ok) return;
      expect(probed.tools.map((t) => t.name).sort()).toEqual([...pooled].sort());
      expect(pooled.length).toBeGreaterThan(0);
    } finally {
      await pool.close();
    }
  });

  describe("over Streamable HTTP on 127.0.0.1", () => {
    let server: ChildProcess;
    let port: number;

    beforeAll(async () => {
      port = await freePort();
      server = spawn(process.execPath, [everythingBin, "streamableHttp"], {
        env: { ...process.env, PORT: String(port) },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`server-everything did not start: ${stderr}`)),
          20_000,
        );
        server.stderr?.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes("listening on port")) {
            clearTimeout(timer);
            resolve();
          }
        });
        server.once("exit", () => reject(new Error(`server-everything exited: ${stderr}`)));
      });
    });

    afterAll(async () => {
      const pid = server.pid!;
      server.kill("SIGKILL");
      await waitFor(() => !alive(pid), 10_000, "server-everything to exit");
    });

    it("serves its tools through the pool", async () => {
      await exercise({ id: "everything", transport: "http", url: `http://127.0.0.1:${port}/mcp` });
    });
  });
});
