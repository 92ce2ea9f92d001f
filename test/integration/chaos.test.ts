/**
 * Chaos (test/faults.ts, "A service left running for days"): eight agent
 * processes call a real daemon for the whole run while its children are SIGKILLed and
 * SIGSTOPped at random and the daemon itself is SIGKILLed once, halfway. Then: every call,
 * read-only ones above all, succeeded or failed the way the product promises it may (see
 * `excuse`), always with a code; the agents brought the daemon back by auto-starting it over
 * the socket the dead one left; no child of the dead daemon outlived it, and no process of
 * the run outlives the last daemon; the canary secret every row carries is in no file and no
 * output.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as pause } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { connect, type PoolClient } from "mcpool-client";
import { cliPath, startDaemon, testHome, type TestHome } from "../helpers/daemon.js";
import { filesUnder } from "../helpers/files.js";
import { alive, childrenOf, fixture, waitFor } from "../helpers/processes.js";

/** How long the blows go on, ms; the daemon is SIGKILLed halfway. */
const CHAOS_MS = 30_000;
// Between two blows, ms: the load itself, not a wait for anything.
const MIN_BLOW_GAP_MS = 150;
const MAX_BLOW_GAP_MS = 450;
/** Share of blows that SIGSTOP a child rather than SIGKILL it. */
const STOP_SHARE = 0.3;
/** Small, so a stopped child's calls time out and it is found hung within seconds. */
const CALL_TIMEOUT_MS = 2_000;
const PING_TIMEOUT_MS = 500;
const AGENTS = 8;
const SERVERS = ["alpha", "beta", "gamma", "delta"] as const;

interface Outcome {
  agent: string;
  server: string;
  tool: string;
  readOnly: boolean;
  start: number;
  end: number;
  /** The daemon whose connection the call started on; null while the agent was disconnected. */
  daemonPid: number | null;
  ok: boolean;
  answer?: string;
  code?: string | null;
  name?: string;
  message?: string;
}

interface Blow {
  kind: "kill" | "stop";
  server: string;
  pid: number;
  at: number;
  /**
   * When the daemon was seen to drop that child (its `close` event reached the observer), or
   * died; until then (open: to the end) a call may still have been sent to it.
   */
  until?: number;
}

interface Agent {
  name: string;
  process: ChildProcess;
  outcomes: Outcome[];
  output(): string;
  done: boolean;
}

const homes: TestHome[] = [];
const agents: Agent[] = [];
const observers: PoolClient[] = [];
const stopped = new Set<number>();

function wakeStopped(): void {
  for (const pid of stopped) {
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      // gone
    }
  }
  stopped.clear();
}

afterEach(async () => {
  wakeStopped();
  for (const agent of agents.splice(0)) {
    if (agent.process.exitCode === null && agent.process.signalCode === null) {
      agent.process.kill("SIGKILL");
    }
  }
  await Promise.all(observers.splice(0).map((c) => c.close().catch(() => undefined)));
  for (const home of homes.splice(0)) {
    // Ours by construction: only what this test started carries its temp home.
    const left = processesOf(home.dir);
    for (const { pid } of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    await waitFor(() => left.every(({ pid }) => !alive(pid)), 10_000, "leftovers to die");
    home.remove();
  }
});

/** Live processes whose environment names `marker` (the test home, or the canary). */
function processesOf(marker: string): { pid: number; ppid: number; cmdline: string }[] {
  const out: { pid: number; ppid: number; cmdline: string }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${name}/environ`, "latin1").includes(marker)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z") continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "latin1").replaceAll("\0", " ");
      out.push({ pid: Number(name), ppid: Number(fields[1]), cmdline: cmdline.trim() });
    } catch {
      // Gone while we looked, or not ours to read.
    }
  }
  return out;
}

function startAgent(h: TestHome, name: string): Agent {
  const child = spawn(process.execPath, [fixture("chaos-agent.mjs")], {
    env: { ...h.env, CHAOS_AGENT: name, CHAOS_CLI: cliPath, CHAOS_SERVERS: SERVERS.join(",") },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let text = "";
  const agent: Agent = { name, process: child, outcomes: [], output: () => text, done: false };
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    text += `${line}\n`;
    const record = JSON.parse(line) as Omit<Outcome, "agent"> | { done: true };
    if ("done" in record) agent.done = true;
    else agent.outcomes.push({ ...record, agent: name });
  });
  agents.push(agent);
  return agent;
}

/** waitFor, with what is still wrong when the bound runs out. */
async function waitShowing(
  condition: () => boolean,
  timeoutMs: number,
  what: string,
  show: () => unknown,
): Promise<void> {
  await waitFor(condition, timeoutMs, what).catch((error: Error) => {
    throw new Error(`${error.message}; still: ${JSON.stringify(show())}`);
  });
}

/** The child that gave a successful answer: `read by <pid>` or the bare pid of `pid`. */
function answeringPid(o: Outcome): number | undefined {
  if (!o.ok || o.answer === undefined) return undefined;
  const match = /^(?:read by )?(\d+)$/.exec(o.answer);
  return match && (o.tool === "read" || o.tool === "pid") ? Number(match[1]) : undefined;
}

/**
 * Why a failed call was allowed to fail, or undefined if nothing excuses it. Only what the
 * product promises: a call in flight on (or sent to) the daemon we killed fails
 * `daemon-unavailable` (the client does not resend); a call to a stopped child fails
 * `timeout` until the child is found hung and replaced; a call cut off by a crash fails
 * `server-crashed` — a trusted read-only one only when the retry it gets was cut off too.
 * A call made after an agent saw the daemon go must bring it back and succeed, and a
 * call to a server coming back waits for it, so nothing excuses those.
 */
function excuse(o: Outcome, blows: readonly Blow[], deadDaemon: number): string | undefined {
  const during = (kind: Blow["kind"]): Blow[] =>
    blows.filter(
      (b) =>
        b.kind === kind && b.server === o.server && b.at <= o.end && (b.until ?? o.end) >= o.start,
    );
  switch (o.code) {
    case "daemon-unavailable":
      return o.daemonPid === deadDaemon ? "sent to the daemon we killed" : undefined;
    case "timeout":
      return during("stop").length > 0 ? "its server's child was stopped" : undefined;
    case "server-crashed": {
      const kills = during("kill").length;
      return kills >= (o.readOnly ? 2 : 1) ? `${kills} kills during it` : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * What happened around an unexcused outcome: the blows on its server, and the daemons' log
 * lines about that server or about no server (serving, reaping, stopping).
 */
function around(o: Outcome, blows: readonly Blow[], log: string): string {
  const near = (t: number): boolean => t >= o.start - 5_000 && t <= o.end + 1_000;
  const about = (line: string): boolean =>
    line.includes(o.server) || !SERVERS.some((id) => line.includes(id));
  const lines = log
    .split("\n")
    .filter((line) => near(Date.parse(line.slice(0, 24))) && about(line));
  return [
    JSON.stringify(o),
    ...blows.filter((b) => b.server === o.server && near(b.at)).map((b) => JSON.stringify(b)),
    ...lines,
  ].join("\n  ");
}

describe("chaos", () => {
  it("answers what it promises through random SIGKILLs and SIGSTOPs of children and a SIGKILL of the daemon, and leaves no process or secret behind", async () => {
    const h = testHome("mcpool-chaos-");
    homes.push(h);
    const canary = `canary-chaos-${randomUUID()}`;
    const row = (id: string) => ({
      command: process.execPath,
      args: [fixture("crash.mjs")],
      env: { API_KEY: `${canary}-${id}` },
      trustAnnotations: true,
      callTimeoutMs: CALL_TIMEOUT_MS,
    });
    h.writeConfig(
      {
        alpha: row("alpha"),
        beta: row("beta"),
        gamma: row("gamma"),
        // Quotes its key on stderr as it starts: every crash report carries that tail.
        delta: {
          ...row("delta"),
          command: "/bin/sh",
          args: [
            "-c",
            'echo "delta starting with API_KEY=$API_KEY" >&2; exec "$0" "$1"',
            process.execPath,
            fixture("crash.mjs"),
          ],
        },
      },
      { mcpool: { pingTimeoutMs: PING_TIMEOUT_MS, crashBackoffMs: 200 } },
    );
    const first = await startDaemon(h);
    const observer = await connect({
      socketPath: h.socketPath,
      clientName: "chaos-observer",
      maxReconnectDelayMs: 250,
    });
    observers.push(observer);
    const blows: Blow[] = [];
    // A blow lasts until the daemon drops that server's child: crashed, or found hung.
    observer.onEvent((event) => {
      if (event.type !== "close") return;
      for (const b of blows) if (b.server === event.serverId) b.until ??= Date.now();
    });

    const crew = Array.from({ length: AGENTS }, (_, i) => startAgent(h, `agent-${i}`));
    const outcomes = (): Outcome[] => crew.flatMap((a) => a.outcomes);
    // Children proven healthy by an answer: the only ones struck. One killed before it ever
    // answered died "right after starting", which the pool answers with backoff, not a redial.
    const healthy = (): Map<number, string> => {
      const map = new Map<number, string>();
      for (const o of outcomes()) {
        const pid = answeringPid(o);
        if (pid !== undefined) map.set(pid, o.server);
      }
      return map;
    };
    await waitFor(
      () => crew.every((a) => a.outcomes.some((o) => o.ok)) && healthy().size >= SERVERS.length,
      30_000,
      "every agent answered and every server's child proven",
    );

    const begin = Date.now();
    let deadDaemon: { pid: number; at: number } | undefined;
    while (Date.now() - begin < CHAOS_MS) {
      await pause(MIN_BLOW_GAP_MS + Math.random() * (MAX_BLOW_GAP_MS - MIN_BLOW_GAP_MS));
      if (deadDaemon === undefined && Date.now() - begin >= CHAOS_MS / 2) {
        deadDaemon = { pid: first.pid, at: Date.now() };
        process.kill(first.pid, "SIGKILL");
        // Its children are no longer a live daemon's: nothing is sent to them any more.
        for (const b of blows) b.until ??= deadDaemon.at;
        continue;
      }
      const daemonPid = observer.daemon?.pid;
      if (daemonPid === undefined || daemonPid === deadDaemon?.pid) continue;
      const proven = healthy();
      const candidates = childrenOf(daemonPid).filter(
        (pid) => proven.has(pid) && !stopped.has(pid),
      );
      const pid = candidates[Math.floor(Math.random() * candidates.length)];
      if (pid === undefined) continue;
      const server = proven.get(pid)!;
      // One stop at a time: each costs every agent that calls it a call timeout.
      const stopping =
        Math.random() < STOP_SHARE &&
        !blows.some((b) => b.kind === "stop" && b.until === undefined);
      blows.push({ kind: stopping ? "stop" : "kill", server, pid, at: Date.now() });
      if (stopping) stopped.add(pid);
      process.kill(pid, stopping ? "SIGSTOP" : "SIGKILL");
    }
    expect(deadDaemon).toBeDefined();
    const dead = deadDaemon!;

    // Every agent came back by itself: calls after the SIGKILL answered by a new daemon.
    await waitFor(
      () => observer.daemon !== undefined && observer.daemon.pid !== dead.pid,
      20_000,
      "the observer to reach the new daemon",
    );
    const final = observer.daemon!.pid;
    for (const agent of crew) {
      const back = agent.outcomes.filter((o) => o.ok && o.start > dead.at && o.daemonPid === final);
      expect(back.length, `${agent.name} calls answered by the new daemon`).toBeGreaterThan(0);
    }
    // No child of the killed daemon outlived it, not even one it left stopped, which stdin EOF
    // cannot end: the new daemon reaped those. Checked before we wake anything.
    await waitShowing(
      () => processesOf(canary).every((p) => p.ppid === final),
      20_000,
      "only the new daemon's children to carry the canary",
      () => processesOf(canary),
    );
    wakeStopped();

    for (const agent of crew) agent.process.stdin!.end();
    await waitFor(
      () => crew.every((a) => a.process.exitCode !== null),
      30_000,
      "the agents to finish their last call and exit",
    );
    for (const agent of crew) {
      expect(agent.done, `${agent.name} closed cleanly:\n${agent.output().slice(-2_000)}`).toBe(
        true,
      );
      expect(agent.process.exitCode).toBe(0);
    }
    const all = outcomes();
    const kills = blows.filter((b) => b.kind === "kill");
    const stops = blows.filter((b) => b.kind === "stop");
    expect(kills.length).toBeGreaterThanOrEqual(10);
    expect(stops.length).toBeGreaterThanOrEqual(2);

    const failed = new Map<string, number>();
    for (const o of all.filter((o) => !o.ok)) {
      const key = `${o.code}${o.readOnly ? " (read)" : ""}`;
      failed.set(key, (failed.get(key) ?? 0) + 1);
    }
    console.info(
      `chaos: ${all.length} calls (${all.filter((o) => o.readOnly).length} reads), ${kills.length} kills, ${stops.length} stops; failed: ${[...failed].map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`,
    );
    // Every failure carries a code: a pool or client code, never a bare error or rpc-error.
    const uncoded = all.filter(
      (o) => !o.ok && (typeof o.code !== "string" || o.code === "rpc-error"),
    );
    expect(uncoded.map((o) => JSON.stringify(o))).toEqual([]);
    const log = filesUnder(h.dir)
      .filter((f) => f.path.includes("mcpool.log"))
      .map((f) => f.text)
      .join("\n");
    const unexcused = all.filter((o) => !o.ok && excuse(o, blows, dead.pid) === undefined);
    expect(
      unexcused.slice(0, 5).map((o) => around(o, blows, log)),
      `${unexcused.length} of ${all.length} calls failed unexcused (daemon ${dead.pid} killed at ${dead.at})`,
    ).toEqual([]);
    const reads = all.filter((o) => o.readOnly);
    for (const server of SERVERS) {
      expect(reads.filter((o) => o.server === server && o.ok).length).toBeGreaterThan(0);
    }

    process.kill(final, "SIGTERM");
    await waitShowing(
      () => processesOf(h.dir).length === 0 && processesOf(canary).length === 0,
      20_000,
      "every process of the run to be gone",
      () => [...processesOf(h.dir), ...processesOf(canary)],
    );

    // The canary is in no file (but the config that holds it) and no output.
    const files = filesUnder(h.dir).filter((f) => f.path !== h.configPath);
    expect(files.filter((f) => f.text.includes(canary)).map((f) => f.path)).toEqual([]);
    expect(first.stderr()).not.toContain(canary);
    for (const agent of crew) expect(agent.output()).not.toContain(canary);
    // The redaction had something to hide: delta's crash reports quote its stderr.
    expect(log).toMatch(/delta starting with API_KEY=/);
  }, 120_000);
});
