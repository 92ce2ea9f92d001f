/**
 * The daemon stamps the answers it records for cold entries with the build it runs, read as
 * it starts: an install over its files afterwards does not lend them the new build's id.
 * The id is the digest of the build's JavaScript, written by `npm run build` into
 * dist/build-id.json; output built without it is digested as it is.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  copyFileSync,
  cpSync,
  existsSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
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

/** A copy of the built package in `root`, its node_modules the repository's. */
function install(root: string): void {
  cpSync(join(repo, "dist"), join(root, "dist"), { recursive: true });
  copyFileSync(join(repo, "package.json"), join(root, "package.json"));
  symlinkSync(join(repo, "node_modules"), join(root, "node_modules"));
}

/** `buildId()` and `digestBuild()` as a process of the package in `root` computes them. */
function idsOf(root: string): { id: string; digest: string } {
  const module = JSON.stringify(new URL(`file://${join(root, "dist", "build-id.js")}`).href);
  const script = `const m = await import(${module}); console.log(JSON.stringify({ id: m.buildId(), digest: m.digestBuild() }));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  return JSON.parse(out) as { id: string; digest: string };
}

describe("the build a recording is stamped with", () => {
  it("is the one the daemon loaded, not one installed over it since", async () => {
    const h = fleet.home();
    h.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
    const root = join(h.dir, "installed");
    install(root);
    const daemon = await startDaemon(h, [], {
      bin: join(root, "dist", "cli", "bin.js"),
      wrap: [process.execPath],
    });
    try {
      // The MCP sockets are up: the daemon has made its recorder.
      await waitFor(() => existsSync(scopeSocket(h, ["--server", "echo"])), 30_000, "MCP sockets");
      // An upgrade installed over it: new code, and the id its build wrote.
      appendFileSync(join(root, "dist", "version.js"), "\n// an upgrade installed over it\n");
      const upgraded = createHash("sha256").update("an upgrade").digest("hex");
      writeFileSync(join(root, "dist", "build-id.json"), JSON.stringify({ id: upgraded }));
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

  it("is the digest of the build's JavaScript, written by the build and computed without it", () => {
    const root = join(fleet.home().dir, "installed");
    install(root);
    // As built: the id written is the output's digest.
    const built = idsOf(root);
    expect(built.id).toBe(built.digest);
    // Output with no written id (a bare tsc) is digested as it is, changed code and all.
    rmSync(join(root, "dist", "build-id.json"));
    appendFileSync(join(root, "dist", "version.js"), "\n// built by hand\n");
    const bare = idsOf(root);
    expect(bare.id).toBe(bare.digest);
    expect(bare.id).not.toBe(built.id);
  });
});
