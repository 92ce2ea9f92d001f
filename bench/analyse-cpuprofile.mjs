/**
 * A tiny analyser of V8 .cpuprofile files (what `node --cpu-prof` writes): self time per
 * function, inclusive time per function (recursion counted once), and self time per
 * area (our code, the MCP SDK, zod, json-rpc-2.0, Node's streams and sockets, GC…).
 *   node bench/analyse-cpuprofile.mjs <file.cpuprofile> [--top N] [--from US --to US]
 */
import { readFileSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** Where a frame's code lives, coarse enough to say what dominates. */
export function areaOf(frame) {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === "(garbage collector)") return "GC";
    if (functionName === "(idle)") return "idle";
    if (functionName === "(program)") return "V8/native (program)";
    return `native ${functionName || "(anonymous)"}`;
  }
  if (url.includes("/@modelcontextprotocol/sdk/")) {
    const sub = /\/dist\/esm\/(.+?)\.js/.exec(url)?.[1] ?? "sdk";
    return `MCP SDK ${sub}`;
  }
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
  if (pkg === "mcpool-client" || url.includes("/client/dist/")) {
    return `mcpool-client ${/client\/dist\/(.+?)\.js/.exec(url)?.[1] ?? ""}`.trim();
  }
  if (pkg) return pkg;
  if (url.includes("/dist/")) return `mcpool ${/\/dist\/(.+?)\.js/.exec(url)?.[1] ?? ""}`.trim();
  if (url.startsWith("node:")) {
    const mod = url.slice(5).replace(/^internal\//, "");
    if (/^(net|stream|streams\/|child_process|pipe|tcp|buffer|string_decoder)/.test(mod))
      return "node streams/sockets/pipes";
    if (/^(process\/task_queues|timers|process\/promises|async_hooks)/.test(mod))
      return "node microtasks/timers";
    if (/^(event_target|abort_controller|events)/.test(mod)) return "node events/EventTarget";
    return `node ${mod.split("/")[0]}`;
  }
  return url;
}

function keyOf(frame) {
  const where = frame.url
    ? `${frame.url.replace(/^.*\/node_modules\//, "")}:${frame.lineNumber + 1}`
    : "";
  return `${frame.functionName || "(anonymous)"} ${where}`.trim();
}

/**
 * Self and inclusive ms per function and per area; totals exclude idle. `window` keeps only
 * the samples taken between `fromUs` and `toUs`, on the profile's clock: V8's monotonic
 * microseconds, which is `process.hrtime.bigint() / 1000n` in any process of the machine.
 */
export function analyse(profile, window = {}) {
  const fromUs = window.fromUs ?? -Infinity;
  const toUs = window.toUs ?? Infinity;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map();
  let at = profile.startTime;
  let firstUs;
  let lastUs;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < fromUs || at > toUs) continue;
    firstUs ??= at;
    lastUs = at;
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  }
  const byFunction = new Map();
  const byArea = new Map();
  let totalUs = 0;
  let idleUs = 0;
  const add = (map, key, field, us, extra) => {
    let entry = map.get(key);
    if (!entry) map.set(key, (entry = { key, self: 0, inclusive: 0, ...extra }));
    entry[field] += us;
  };
  // Inclusive: walk the tree; a function already on the stack is not counted again.
  const inclusive = (id, onStack) => {
    const node = nodes.get(id);
    let us = selfUs.get(id) ?? 0;
    const key = keyOf(node.callFrame);
    const nested = onStack.has(key);
    if (!nested) onStack.add(key);
    for (const child of node.children ?? []) us += inclusive(child, onStack);
    if (!nested) {
      onStack.delete(key);
      add(byFunction, key, "inclusive", us, { area: areaOf(node.callFrame) });
    }
    return us;
  };
  inclusive(profile.nodes[0].id, new Set());
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id).callFrame;
    const area = areaOf(frame);
    if (area === "idle") {
      idleUs += us;
      continue;
    }
    totalUs += us;
    add(byFunction, keyOf(frame), "self", us, { area });
    add(byArea, area, "self", us, {});
  }
  const sorted = (map, field) => [...map.values()].sort((a, b) => b[field] - a[field]);
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    wallMs: ((lastUs ?? 0) - (firstUs ?? 0)) / 1000,
    functions: sorted(byFunction, "self"),
    inclusive: sorted(byFunction, "inclusive"),
    areas: sorted(byArea, "self"),
  };
}

/** The analysis as text: top self-time functions, top areas, top inclusive of our code. */
export function describe(result, top = 25, title = "profile") {
  const pct = (us) => `${((us / 1000 / result.totalMs) * 100).toFixed(1)}%`.padStart(6);
  const ms = (us) => `${(us / 1000).toFixed(0)} ms`.padStart(9);
  const lines = [
    `${title}: ${result.totalMs.toFixed(0)} ms busy of ${result.wallMs.toFixed(0)} ms (idle ${result.idleMs.toFixed(0)} ms)`,
    "",
    "self time by area:",
    ...result.areas.slice(0, 18).map((a) => `${ms(a.self)} ${pct(a.self)}  ${a.key}`),
    "",
    `top ${top} functions by self time:`,
    ...result.functions
      .slice(0, top)
      .map((f) => `${ms(f.self)} ${pct(f.self)}  ${f.key}  [${f.area}]`),
    "",
    "mcpool, mcpool-client and SDK functions by inclusive time:",
    ...result.inclusive
      .filter((f) => /^(mcpool|MCP SDK)/.test(f.area))
      .slice(0, top)
      .map((f) => `${ms(f.inclusive)} ${pct(f.inclusive)}  ${f.key}  [${f.area}]`),
  ];
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write(
      "usage: node bench/analyse-cpuprofile.mjs <file.cpuprofile> [--top N] [--from US --to US]\n",
    );
    process.exit(2);
  }
  const at = process.argv.indexOf("--top");
  const top = at === -1 ? 25 : Number(process.argv[at + 1]);
  const number = (name) => {
    const i = process.argv.indexOf(name);
    return i === -1 ? undefined : Number(process.argv[i + 1]);
  };
  const result = analyse(JSON.parse(readFileSync(file, "utf8")), {
    fromUs: number("--from"),
    toUs: number("--to"),
  });
  process.stdout.write(`${describe(result, top, file)}\n`);
}
