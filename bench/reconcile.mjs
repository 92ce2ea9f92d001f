/**
 * Reconcile: 50 echo rows in mcp.json; edit one row's connection (its env) and
 * save the file the way editors do. Counts the children whose pid changed (state()), and
 * times the save to the edited server's `connect` event. The baseline is the debounce plus
 * that server's own start (spawn + initialize + list, with the SDK, measured in the same
 * run, alternating with the edits). While the edited server swaps (its old child serving
 * until the new one is ready), calls to it keep going: the worst of them is set beside the
 * worst of as many calls made before the save (reconcile.callDuringSwap), like against like on a
 * machine whose scheduler alone makes a rare call slow.
 */
import { performance } from "node:perf_hooks";
import process from "node:process";
import { benchHome, client, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { directClient, listAll } from "./lib/direct.mjs";
import { run } from "./lib/harness.mjs";
import { figure, note, round } from "./lib/report.mjs";
import { percentile } from "./lib/stats.mjs";

const ROWS = Number(process.env.BENCH_RECONCILE_ROWS ?? 50);
const EDITS = 5;
/** The daemon's debounce, set explicitly so the baseline knows it (the pool's default too). */
const DEBOUNCE_MS = Number(process.env.BENCH_RECONCILE_DEBOUNCE_MS ?? 100);
const READY_TIMEOUT_MS = 20_000;
/** Calls timed before the first save, then as many as the swap before took: nothing swaps. */
const FIRST_CALLS_BEFORE = 200;

const idOf = (i) => `echo${String(i).padStart(2, "0")}`;

function config(edits) {
  const servers = {};
  for (let i = 0; i < ROWS; i++) {
    servers[idOf(i)] = rows.echo(edits.has(i) ? { BENCH_EDIT: String(edits.get(i)) } : {});
  }
  return servers;
}

/** Milliseconds one echo call to `id` takes. */
async function timedCall(pool, id) {
  const started = performance.now();
  await pool.call(`${id}__echo`, { text: "reconcile" });
  return performance.now() - started;
}

async function startDirect(row) {
  const started = performance.now();
  const direct = await directClient(row, "bench-reconcile");
  await listAll(direct.client);
  const ms = performance.now() - started;
  await direct.close();
  return ms;
}

/**
 * startDirect() with calls to `id` going on meanwhile, as during a swap: the floor of what a
 * call pays while a new Node child boots on the same cores, with no reconcile in it.
 */
async function startDirectCalling(row, pool, id) {
  let done = false;
  const starting = startDirect(row).finally(() => (done = true));
  const during = [];
  while (!done) during.push(await timedCall(pool, id));
  return { ms: await starting, during };
}

run("Reconcile", async () => {
  const home = benchHome();
  const edits = new Map();
  const extra = { mcpool: { syncDebounceMs: DEBOUNCE_MS } };
  home.writeConfig(config(edits), extra);
  await startDaemon(home);
  const pool = await client(home, "bench-reconcile");
  const started = performance.now();
  await waitReady(pool, ROWS, 120_000);
  note(`${ROWS} rows ready in ${Math.round(performance.now() - started)} ms`);

  const connects = [];
  pool.onEvent((event) => {
    if (event.type === "connect") {
      connects.push({ at: performance.now(), id: event.serverId, dialMs: event.ms });
    }
  });
  await pool.state(); // the subscription is in place once a later request is answered

  await startDirect(rows.echo()); // warm-up of the baseline arm
  const starts = [];
  const readies = [];
  /** The daemon's own measure of each dial (the `connect` event's ms): spawn to listed. */
  const dials = [];
  const restarted = [];
  /** Per edit: the worst call made during the swap, less the worst of the calls before. */
  const swapExtra = [];
  /** Per edit: the same while an unrelated echo server starts (the floor). */
  const startExtra = [];
  let callsBefore = FIRST_CALLS_BEFORE;
  let othersKept = true;
  for (let edit = 0; edit < EDITS; edit++) {
    const target = (edit * 11 + 7) % ROWS;
    const id = idOf(target);
    const before = new Map((await pool.state()).map((s) => [s.id, s.pid]));
    const quiet = [];
    for (let i = 0; i < callsBefore; i++) quiet.push(await timedCall(pool, id));
    const direct = rows.echo({ BENCH_EDIT: `direct-${edit}` });
    const { ms, during: whileStarting } = await startDirectCalling(direct, pool, id);
    starts.push(ms);
    startExtra.push(Math.max(0, ...whileStarting) - Math.max(...quiet));
    const during = [];
    edits.set(target, edit);
    const saved = performance.now();
    home.writeConfig(config(edits), extra);
    const deadline = saved + READY_TIMEOUT_MS;
    let ready;
    while (!(ready = connects.find((c) => c.id === id && c.at > saved))) {
      if (performance.now() > deadline) throw new Error(`${id} was not ready after the edit`);
      // Answered by the old child while the new one starts: no call waits for the swap.
      during.push(await timedCall(pool, id));
    }
    swapExtra.push(Math.max(0, ...during) - Math.max(...quiet));
    callsBefore = Math.max(during.length, 1);
    readies.push(ready.at - saved);
    dials.push(ready.dialMs);
    // Let anything else the reconcile might do happen before counting pids.
    await pool.state();
    await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS * 3));
    const after = await pool.state();
    const changed = after.filter((s) => s.pid !== before.get(s.id)).map((s) => s.id);
    restarted.push(changed.length);
    if (changed.some((other) => other !== id)) othersKept = false;
    if (after.some((s) => s.status !== "ready")) othersKept = false;
  }
  note(`write→ready ms: ${readies.map((ms) => Math.round(ms)).join(", ")}`);
  note(`direct start ms: ${starts.map((ms) => Math.round(ms)).join(", ")}`);
  note(`the daemon's dial ms: ${dials.map((ms) => Math.round(ms)).join(", ")}`);
  note(`children restarted per edit: ${restarted.join(", ")}`);
  note(
    `worst call during a swap, ms over the worst as many before: ${swapExtra.map(round).join(", ")}`,
  );
  note(
    `worst call while an unrelated echo server starts, the same way: ${startExtra.map(round).join(", ")}`,
  );

  const ownStart = percentile(starts, 50);
  return [
    figure({
      name: "reconcile.restarted",
      unit: "children",
      value: Math.max(...restarted),
      baseline: ROWS,
      baselineLabel: "rows in mcp.json",
      checks: [["value", "==", 1]],
      edits: EDITS,
      perEdit: restarted,
      othersKeptPid: othersKept,
    }),
    figure({
      name: "reconcile.writeToReady.p50",
      unit: "ms",
      value: percentile(readies, 50),
      baseline: DEBOUNCE_MS + ownStart,
      baselineLabel: `debounce ${DEBOUNCE_MS} ms + the server's own start (${round(ownStart)} ms p50)`,
      checks: [["ratio", "<=", 1]],
      edits: EDITS,
      max: round(Math.max(...readies)),
      // Where the time went: the daemon's dial (spawn → initialized → listed), and
      // everything before it (watch event, debounce, reading the file, the plan).
      dialP50: round(percentile(dials, 50)),
      beforeDialP50: round(
        percentile(
          readies.map((ms, i) => ms - dials[i]),
          50,
        ),
      ),
    }),
    figure({
      name: "reconcile.callDuringSwap",
      unit: "ms",
      value: percentile(swapExtra, 50),
      baselineLabel: "worst call during the swap less the worst of as many calls before the save",
      checks: [["value", "<=", 10]],
      edits: EDITS,
      max: round(Math.max(...swapExtra)),
    }),
    figure({
      name: "reconcile.callDuringStart",
      unit: "ms",
      value: percentile(startExtra, 50),
      baselineLabel:
        "the floor: worst call while an unrelated echo server starts, less the worst before",
      edits: EDITS,
      max: round(Math.max(...startExtra)),
    }),
  ];
});
