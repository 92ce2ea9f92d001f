/**
 * Direct is the oracle under load: twelve hosts, each declaring its own project as its only
 * root, start at once beside two CPU burners and ask server-filesystem
 * `list_allowed_directories` through the lean `mcpool bridge --server fs`, three rounds: half
 * on SDK v1 and half on SDK v2, half listing the tools first (as Claude Code does) and half
 * calling at once. Each must get exactly what the same host gets from the server spawned
 * direct once it has the host's roots: its own project, never the row's directory.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { testHome } from "../helpers/daemon.js";
import { openHost } from "./entries.js";
import type { ClientKind, HostSpec } from "./host.js";
import { compare, normalise } from "./normalise.js";
import { pooling, rootsTakenIn } from "./run.js";
import { filesystemFolder, nodeServer } from "./servers.js";
import type { Step } from "./session.js";
import { referenceServer } from "../helpers/processes.js";

const HOSTS = 12;
const PROBE = { name: "list_allowed_directories", arguments: {} };
const ROUNDS = 3;
const filesystemBin = referenceServer("server-filesystem");

describe("twelve hosts with their own roots at once, beside a CPU load", () => {
  const home = testHome("mcpool-differential-roots-");
  const server = nodeServer("fs", [filesystemBin, filesystemFolder(join(home.dir, "row"))]);
  const hosts: HostSpec[] = Array.from({ length: HOSTS }, (_, i) => {
    const root = join(home.dir, `project-${i}`);
    mkdirSync(root, { recursive: true });
    return { client: (i % 2 === 0 ? "v1" : "v2") as ClientKind, capabilities: "roots", root };
  });
  /** Half the hosts list the tools first (as Claude Code does), half call at once (an SDK host). */
  const lists = (spec: HostSpec): boolean => hosts.indexOf(spec) % 4 < 2;
  const burners: ChildProcess[] = [];
  pooling(home, [server]);

  /** What `spec` is told its allowed directories are, through `entry`. */
  async function allowed(spec: HostSpec, entry: "direct" | "lean"): Promise<Step[]> {
    const host = await openHost(home, server, spec, entry);
    try {
      // Direct, server-filesystem takes a host's roots in after the handshake, when it will:
      // the oracle is the server that has them (what the pool promises), so wait for that.
      if (entry === "direct") await rootsTakenIn(host, PROBE, spec.root);
      if (entry === "direct" || lists(spec)) await host.request("tools/list", {});
      const result = await host.request("tools/call", PROBE);
      return normalise([
        { op: "handshake", result: { era: host.era } },
        { op: "tools/call", params: PROBE, result },
      ]);
    } finally {
      await host.close();
    }
  }

  afterAll(async () => {
    for (const burner of burners) burner.kill("SIGKILL");
    await Promise.all(
      burners.map((b) =>
        b.exitCode === null && b.signalCode === null
          ? new Promise((r) => b.once("exit", r))
          : undefined,
      ),
    );
  });

  it("gives every host what it gets direct, in every round", async () => {
    const direct = await Promise.all(hosts.map((spec) => allowed(spec, "direct")));
    // The oracle names each host's own project (else the comparison below would prove nothing).
    direct.forEach((steps, i) => expect(JSON.stringify(steps[1])).toContain(hosts[i]!.root));
    for (let b = 0; b < 2; b++) {
      burners.push(spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
    }
    const wrong: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const pooled = await Promise.all(hosts.map((spec) => allowed(spec, "lean")));
      pooled.forEach((steps, i) => {
        const found = compare(direct[i]!, steps);
        if (found.length > 0) {
          const spec = hosts[i]!;
          const how = lists(spec) ? "listed first" : "called at once";
          const answer = JSON.stringify(steps[1]?.result);
          wrong.push(
            `round ${round}, host ${i} (${spec.client}, ${how}): ${found.join(" ")}: ${answer}`,
          );
        }
      });
    }
    expect(wrong).toEqual([]);
  }, 240_000);
});
