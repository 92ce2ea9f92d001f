/**
 * The daemon stamps the answers it records for cold entries with the build it runs, read as
 * it starts: an install over its files afterwards does not lend them the new build's id.
 */
import {
  appendFileSync,
  copyFileSync,
  cpSync,
  existsSync,
  readFileSync,
  symlinkSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { scopeSocket, stdioBridge } from "../helpers/bridge.js";
import { cliPath, startDaemon } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

const fleet = useFleet();
/** The built module, imported at run time: the typecheck runs beside the build, before it emits. */
const builtBuildId = new URL("../../dist/build-id.js", import.meta.url).href;
const repo = dirname(dirname(dirname(cliPath)));

describe("the build a recording is stamped with", () => {
  it("is the one the daemon loaded, not one installed over it since", async () => {
    const h = fleet.home();
    h.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
    const root = join(h.dir, "installed");
    cpSync(join(repo, "dist"), join(root, "dist"), { recursive: true });
    copyFileSync(join(repo, "package.json"), join(root, "package.json"));
    symlinkSync(join(repo, "node_modules"), join(root, "node_modules"));
    const daemon = await startDaemon(h, [], {
      bin: join(root, "dist", "cli", "bin.js"),
      wrap: [process.execPath],
    });
    try {
      // The MCP sockets are up: the daemon has made its recorder.
      await waitFor(() => existsSync(scopeSocket(h, ["--server", "echo"])), 30_000, "MCP sockets");
      appendFileSync(join(root, "dist", "version.js"), "\n// an upgrade installed over it\n");
      const host = await stdioBridge(h, ["--server", "echo"], {}, "lean");
      const recording = join(h.env.XDG_DATA_HOME!, "mcpool", "cold-answers", "echo.json");
      try {
        await host.client.listTools();
        await waitFor(() => existsSync(recording), 30_000, "the recording");
      } finally {
        await host.close();
      }
      const { validity } = JSON.parse(readFileSync(recording, "utf8")) as {
        validity: { build: string };
      };
      const { buildId } = (await import(builtBuildId)) as { buildId: () => string };
      expect(validity.build).toBe(buildId());
    } finally {
      await daemon.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  });
});
