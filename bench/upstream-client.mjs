/**
 * The pool's upstream client: does the pool's own MCP client
 * (src/pool/mcp/client.ts `McpClient`, on protocol.ts and the pool's stdio transport) keep
 * growing the modern era, or give way to SDK v2's `Client` (`versionNegotiation`, `prior`)?
 * Criteria: conformance, the hop (hop.mjs) and idle RSS (memory.mjs) within 5% of today, code no longer owned.
 *
 * In one run, the arms alternating in rounds so drift and other load hit both:
 * - hop: the same sequential `echo` tools/call, p50/p99, by McpClient on the pool's
 *   ChildProcessTransport (`ours`) and by SDK v2's Client on its StdioClientTransport (`v2`),
 *   each to its own child of the same server: the modern-only server (modern-stdio.mjs,
 *   both pinned to 2026-07-28) and the legacy SDK v1 echo server (agents/sdk-echo.mjs, both legacy).
 *   A third arm, v2's Client on the pool's transport (`v2OnPoolTransport`), is what a move
 *   would run: the pool keeps its transport (process groups, stderr tail). Not judged.
 * - connect: ms to connected and to the first echo answered, cold (pinned: server/discover
 *   for modern, initialize for legacy) and warm (a kept verdict: `prior`), median of RUNS.
 * - memory: VmRSS of a fresh `node --expose-gc` that loads one client, connects to one
 *   modern and one legacy child, lists and calls once each and collects; median of 5 each.
 *   The daemon is not run: its idle RSS (memory.mjs, docs/performance.md) plus the measured difference is judged.
 * - API: what v2's Client allows per request, tried live against the modern server: the
 *   caller's clientInfo/capabilities/logLevel envelope (the pool's RequestOptions.caller)
 *   and routing an input_required's questions to the request's own caller (`answer`).
 * - code: lines of src/pool/mcp by what a move to v2 would take off the pool's hands.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { echoFixture, repoRoot } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { figure, note, round } from "./lib/report.mjs";
import { median, percentile } from "./lib/stats.mjs";

const CALLS = Number(process.env.BENCH_UPSTREAM_CALLS ?? 2000);
const WARMUP = Number(process.env.BENCH_UPSTREAM_WARMUP ?? 3000);
const ROUNDS = 10;
const RUNS = Number(process.env.BENCH_UPSTREAM_RUNS ?? 7);
const RSS_RUNS = Number(process.env.BENCH_UPSTREAM_RSS_RUNS ?? 5);
/**
 * Today's daemon-level figures the criteria are judged against (README's performance table):
 * the echo call p50/p99 through the daemon (hop.mjs), and idle RSS (memory.mjs) with one echo server.
 */
const HOP_P50_MS = Number(process.env.BENCH_UPSTREAM_HOP_P50_MS ?? 0.141);
const HOP_P99_MS = Number(process.env.BENCH_UPSTREAM_HOP_P99_MS ?? 0.637);
const IDLE_RSS_MB = Number(process.env.BENCH_UPSTREAM_IDLE_RSS_MB ?? 58.5);

const MODERN = "2026-07-28";
const INFO = { name: "bench-upstream", version: "0" };
const CAPS = { elicitation: {} };
const modernFixture = join(repoRoot, "test/fixtures/modern-stdio.mjs");
const servers = { modern: modernFixture, legacy: echoFixture };
const ARMS = ["ours", "v2", "v2OnPoolTransport"];
const dist = (path) => pathToFileURL(join(repoRoot, "dist/pool/mcp", path)).href;

const { McpClient } = await import(dist("client.js"));
const { ChildProcessTransport } = await import(dist("stdio-transport.js"));
const v2 = await import("@modelcontextprotocol/client");
const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");

/** The whole environment (it carries the bench mark), as the daemon's `childEnv: inherit`. */
const childEnv = () => ({ ...process.env });

/** An echo client of `arm` on its own child of `era`'s server, connected; `prior` from `kept`. */
async function open(arm, era, kept) {
  const args = [servers[era]];
  if (arm === "ours") {
    const client = new McpClient(INFO, { capabilities: CAPS });
    const transport = new ChildProcessTransport({
      command: process.execPath,
      args,
      env: childEnv(),
    });
    const plan =
      era === "modern"
        ? { pin: MODERN, prior: kept?.ours, discoverFirst: false }
        : { pin: kept ? "auto" : "legacy", prior: kept?.ours, discoverFirst: false };
    const off = onCleanup(() => client.close());
    await client.connect(transport, { timeout: 30_000 }, plan);
    if (client.era !== era) throw new Error(`ours connected ${client.era} to the ${era} server`);
    return {
      call: (params, options) => client.callTool(params, options),
      list: () => client.listTools(),
      kept: () => client.verdict,
      client,
      close: () => (off(), client.close()),
    };
  }
  const mode = era === "modern" ? { pin: MODERN } : "legacy";
  const client = new v2.Client(INFO, {
    capabilities: CAPS,
    versionNegotiation: { mode },
  });
  const transport =
    arm === "v2"
      ? new StdioClientTransport({
          command: process.execPath,
          args,
          env: childEnv(),
          stderr: "ignore",
        })
      : new ChildProcessTransport({ command: process.execPath, args, env: childEnv() });
  const off = onCleanup(() => client.close());
  await client.connect(transport, {
    timeout: 30_000,
    ...(kept ? { prior: kept[arm] } : {}),
  });
  if (client.getProtocolEra() !== era) {
    throw new Error(`${arm} connected ${client.getProtocolEra()} to the ${era} server`);
  }
  return {
    call: (params, options) => client.callTool(params, options),
    list: () => client.listTools(),
    kept: () =>
      era === "modern"
        ? { kind: "modern", discover: client.getDiscoverResult() }
        : { kind: "legacy" },
    client,
    close: () => (off(), client.close()),
  };
}

const ECHO = { name: "echo", arguments: { text: "upstream" } };

async function timed(arm, calls, samples) {
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await arm.call(ECHO);
    samples?.push(performance.now() - started);
  }
}

/** `list` rotated by `r`: over the rounds each arm goes first, in the middle and last. */
const rotate = (list, r) => list.map((_, i) => list[(i + r) % list.length]);
const order = (r) => rotate(ARMS, r);

async function hop(era) {
  const arms = {};
  for (const arm of ARMS) {
    arms[arm] = await open(arm, era);
    await arms[arm].list();
  }
  for (const arm of ARMS) await timed(arms[arm], WARMUP);
  const samples = Object.fromEntries(ARMS.map((arm) => [arm, []]));
  const per = Math.ceil(CALLS / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    for (const arm of order(r)) await timed(arms[arm], per, samples[arm]);
  }
  await Promise.all(ARMS.map((arm) => arms[arm].close()));
  return Object.fromEntries(
    ARMS.map((arm) => [
      arm,
      { p50: percentile(samples[arm], 50), p99: percentile(samples[arm], 99) },
    ]),
  );
}

/** Median ms to connected and to the first echo answered, cold and warm, per arm. */
async function connects(era) {
  const kept = {};
  for (const arm of ARMS) {
    const first = await open(arm, era);
    kept[arm] = first.kept();
    await first.close();
  }
  const out = {};
  for (const mode of ["cold", "warm"]) {
    const connect = Object.fromEntries(ARMS.map((arm) => [arm, []]));
    const firstCall = Object.fromEntries(ARMS.map((arm) => [arm, []]));
    for (let r = 0; r < RUNS; r++) {
      for (const arm of order(r)) {
        const started = performance.now();
        const opened = await open(arm, era, mode === "warm" ? kept : undefined);
        connect[arm].push(performance.now() - started);
        await opened.call(ECHO);
        firstCall[arm].push(performance.now() - started);
        await opened.close();
      }
    }
    out[mode] = Object.fromEntries(
      ARMS.map((arm) => [
        arm,
        { connect: median(connect[arm]), firstCall: median(firstCall[arm]) },
      ]),
    );
  }
  return out;
}

/**
 * A fresh Node's source that loads `arm`'s client, uses both servers once and reports RSS.
 * `<client>+v2server`: SDK v2's server side is loaded first, as in a daemon that has served
 * a modern host: v2's client shares @modelcontextprotocol/core with it.
 */
function rssSource(arm) {
  const report = `for (let i = 0; i < 3; i++) globalThis.gc();
await new Promise((resolve) => setTimeout(resolve, 300));
globalThis.gc();
const m = process.memoryUsage();
process.stdout.write(JSON.stringify({ rss: m.rss / 1048576, heapUsed: m.heapUsed / 1048576 }));`;
  if (arm === "bare") return report;
  const head = JSON.stringify({ INFO, CAPS, MODERN, servers });
  const preload = arm.endsWith("+v2server") ? 'await import("@modelcontextprotocol/server");' : "";
  const connect = arm.startsWith("ours")
    ? `const { McpClient } = await import(${JSON.stringify(dist("client.js"))});
const { ChildProcessTransport } = await import(${JSON.stringify(dist("stdio-transport.js"))});
async function open(era) {
  const client = new McpClient(INFO, { capabilities: CAPS });
  const transport = new ChildProcessTransport({ command: process.execPath, args: [servers[era]], env: { ...process.env } });
  await client.connect(transport, {}, { pin: era === "modern" ? MODERN : "legacy", prior: undefined, discoverFirst: false });
  return client;
}`
    : `const { Client } = await import("@modelcontextprotocol/client");
const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
async function open(era) {
  const client = new Client(INFO, { capabilities: CAPS, versionNegotiation: { mode: era === "modern" ? { pin: MODERN } : "legacy" } });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [servers[era]], env: { ...process.env }, stderr: "ignore" }));
  return client;
}`;
  return `const { INFO, CAPS, MODERN, servers } = ${head};
${preload}
${connect}
const clients = [];
for (const era of ["modern", "legacy"]) {
  const client = await open(era);
  await client.listTools();
  await client.callTool({ name: "echo", arguments: { text: "upstream" } });
  clients.push(client);
}
${report}
await Promise.all(clients.map((client) => client.close()));
process.exit(0);`;
}

function rssOnce(arm) {
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", "--input-type=module", "-e", rssSource(arm)],
    { cwd: repoRoot, timeout: 60_000 },
  );
  return JSON.parse(out.toString());
}

async function memory() {
  const arms = ["bare", "ours", "v2", "ours+v2server", "v2+v2server"];
  const rss = Object.fromEntries(arms.map((arm) => [arm, []]));
  const heap = Object.fromEntries(arms.map((arm) => [arm, []]));
  for (let r = 0; r < RSS_RUNS; r++) {
    for (const arm of rotate(arms, r)) {
      const once = rssOnce(arm);
      rss[arm].push(once.rss);
      heap[arm].push(once.heapUsed);
    }
  }
  return Object.fromEntries(
    arms.map((arm) => [arm, { rss: median(rss[arm]), heapUsed: median(heap[arm]), all: rss[arm] }]),
  );
}

/**
 * What v2's Client allows per request, tried on the modern server: a caller's envelope as
 * `_meta` keys of the request (d.ts: "user-supplied `_meta` keys take precedence"), what an
 * auto-fulfilled input request's handler is told of the request it is for, and the two ways
 * a per-request answer can go: the manual mode (`allowInputRequired`) and a subclass of the
 * protected seam auto-fulfilment runs through.
 */
async function api() {
  const caller = { name: "agent-a", version: "1" };
  const modern = await open("v2", "modern");
  const who = await modern.call({
    name: "whoami",
    arguments: {},
    _meta: {
      [v2.CLIENT_INFO_META_KEY]: caller,
      [v2.CLIENT_CAPABILITIES_META_KEY]: { sampling: {} },
      [v2.LOG_LEVEL_META_KEY]: "debug",
    },
  });
  const seen = JSON.parse(who.content[0].text);
  let setLevel;
  try {
    await modern.client.setLoggingLevel("debug");
    setLevel = "sent";
  } catch (error) {
    setLevel = `throws ${error.code ?? error.message}`;
  }
  // Auto-fulfilment: the one handler registered on the client answers; what is it told?
  const signal = new AbortController().signal;
  let told;
  modern.client.setRequestHandler("elicitation/create", async (_request, ctx) => {
    told = {
      id: ctx.mcpReq.id,
      callerSignal: ctx.mcpReq.signal === signal,
      keys: Object.keys(ctx.mcpReq),
    };
    return { action: "accept", content: { answer: "auto" } };
  });
  const auto = await modern.call(
    { name: "confirm", arguments: { question: "upstream-auto" } },
    { signal },
  );
  // Manual: the result comes back to this caller, which answers and sends the retry itself.
  const asked = await modern.call(
    { name: "confirm", arguments: { question: "upstream-manual" } },
    { allowInputRequired: true },
  );
  const answered = await modern.call(
    {
      name: "confirm",
      arguments: { question: "upstream-manual" },
      inputResponses: { ask: { action: "accept", content: { answer: "by its caller" } } },
      requestState: asked.requestState,
    },
    { allowInputRequired: true },
  );
  await modern.close();

  // The protected seam under auto-fulfilment (`_resolveNonCompleteResult(decoded, flow)`):
  // `flow.options` is the call's own options object, so a subclass can route by request,
  // running the rounds and the retry (`flow.retry`) itself.
  class Routed extends v2.Client {
    _resolveNonCompleteResult(decoded, flow) {
      const answer = flow.options?.answer;
      if (answer === undefined) return super._resolveNonCompleteResult(decoded, flow);
      return Promise.all(
        Object.entries(decoded.inputRequests).map(async ([key, asked]) => [
          key,
          await answer(asked),
        ]),
      ).then((answers) =>
        flow.retry(
          {
            ...flow.request.params,
            inputResponses: Object.fromEntries(answers),
            requestState: decoded.requestState,
          },
          {},
        ),
      );
    }
  }
  const routed = new Routed(INFO, {
    capabilities: CAPS,
    versionNegotiation: { mode: { pin: MODERN } },
  });
  await routed.connect(
    new ChildProcessTransport({
      command: process.execPath,
      args: [modernFixture],
      env: childEnv(),
    }),
  );
  const bySubclass = await routed.callTool(
    { name: "confirm", arguments: { question: "upstream-subclass" } },
    { answer: async () => ({ action: "accept", content: { answer: "by its caller" } }) },
  );
  await routed.close();

  // Ours, the same two: RequestOptions.caller and RequestOptions.answer.
  const mine = await open("ours", "modern");
  const ourWho = JSON.parse(
    (
      await mine.call(
        { name: "whoami", arguments: {} },
        { caller: { clientInfo: caller, capabilities: { sampling: {} } } },
      )
    ).content[0].text,
  );
  const ourAnswer = await mine.call(
    { name: "confirm", arguments: { question: "upstream-ours" } },
    { answer: async () => ({ action: "accept", content: { answer: "by its caller" } }) },
  );
  await mine.close();

  // How many processes v2's pinned connect starts on its own StdioClientTransport.
  const start = StdioClientTransport.prototype.start;
  let starts = 0;
  StdioClientTransport.prototype.start = function counted(...args) {
    starts += 1;
    return start.apply(this, args);
  };
  try {
    const pinned = await open("v2", "modern");
    await pinned.close();
  } finally {
    StdioClientTransport.prototype.start = start;
  }
  return {
    v2CallerEnvelopeViaMeta: seen.clientInfo?.name === caller.name,
    v2CallerCapabilitiesViaMeta: JSON.stringify(seen.capabilities) === '{"sampling":{}}',
    oursCaller: ourWho.clientInfo?.name === caller.name,
    v2SetLoggingLevelModern: setLevel,
    v2AutoFulfilHandlerTold: told,
    v2AutoFulfilled: auto.content?.[0]?.text,
    v2ManualResultType: asked.resultType,
    v2ManualRetry: answered.content?.[0]?.text,
    v2SubclassRoutesByFlowOptions: bySubclass.content?.[0]?.text,
    oursAnswer: ourAnswer.content?.[0]?.text,
    v2PinnedStdioProcessesPerConnect: starts,
  };
}

// ---- code ----

const mcpDir = join(repoRoot, "src/pool/mcp");
const source = (file) => readFileSync(join(mcpDir, file), "utf8").replace(/\n$/, "").split("\n");
const isCode = (line) => {
  const t = line.trim();
  return t !== "" && !t.startsWith("//") && !t.startsWith("/*") && !t.startsWith("*");
};
const count = (lines) => ({ lines: lines.length, code: lines.filter(isCode).length });
const add = (a, b) => ({ lines: a.lines + b.lines, code: a.code + b.code });
const ZERO = { lines: 0, code: 0 };

/**
 * Chunks of `lines` between `from` and `to` at `indent`: each declaration with the doc
 * comment above it, up to the next one; named by its identifier. The text before the first
 * is `(head)`.
 */
function chunks(lines, indent = "", from = 0, to = lines.length) {
  const decl = new RegExp(
    `^${indent}(?:(?:export|async|override|readonly|static|get|set|declare)\\s+)*(?:(?:function|const|let|class|interface|type)\\s+)?(#?[A-Za-z_$][\\w$]*)`,
  );
  const starts = [];
  let doc;
  for (let i = from; i < to; i++) {
    const line = lines[i];
    if (!line.startsWith(indent) || /^\s/.test(line.slice(indent.length))) continue;
    const rest = line.slice(indent.length);
    if (rest.startsWith("/**") || rest.startsWith("//")) {
      doc ??= i;
      continue;
    }
    if (/^[})\]*]/.test(rest)) continue;
    const match = decl.exec(line);
    if (match && !/^(import|export \{|export \*)/.test(rest)) {
      starts.push({ name: match[1], at: doc ?? i });
    }
    doc = undefined;
  }
  const out = [{ name: "(head)", from, to: starts[0]?.at ?? to }];
  starts.forEach((start, k) =>
    out.push({ name: start.name, from: start.at, to: starts[k + 1]?.at ?? to }),
  );
  return out.map((chunk) => ({ ...chunk, ...count(lines.slice(chunk.from, chunk.to)) }));
}

/** What of `file` lies in the chunks named `names` (top level, or members of its class). */
function part(file, names, { members = false } = {}) {
  const lines = source(file);
  let list = chunks(lines);
  if (members) {
    const start = lines.findIndex((line) => /^export class /.test(line));
    const end = lines.lastIndexOf("}");
    list = chunks(lines, "  ", start + 1, end);
  }
  const found = list.filter((chunk) => names.includes(chunk.name));
  const missing = names.filter((name) => !found.some((chunk) => chunk.name === name));
  if (missing.length > 0) throw new Error(`${file}: no ${missing.join(", ")}`);
  return found.reduce(add, ZERO);
}

/** Lines of client.ts's shared members that branch on the era (`this.#modern`, the stream…). */
function modernBranches(names) {
  const lines = source("client.ts");
  const start = lines.findIndex((line) => /^export class /.test(line));
  const members = chunks(lines, "  ", start + 1, lines.lastIndexOf("}"));
  const taken = [];
  for (const member of members.filter((chunk) => names.includes(chunk.name))) {
    for (let i = member.from; i < member.to; i++) {
      if (!/this\.#modern|this\.#changes|offeredTools|paramBookOf/.test(lines[i])) continue;
      const indent = /^\s*/.exec(lines[i])[0];
      let end = i;
      if (lines[i].trimEnd().endsWith("{")) {
        while (end + 1 < member.to && lines[end + 1] !== `${indent}}`) end += 1;
        end += 1;
      }
      for (let k = i; k <= end; k++) if (!taken.includes(k)) taken.push(k);
      i = end;
    }
  }
  return count(taken.map((i) => lines[i]));
}

function code() {
  const whole = (file) => count(source(file));
  const files = readdirSync(mcpDir).filter((name) => name.endsWith(".ts"));
  const total = files.map(whole).reduce(add, ZERO);
  // The era/modern parts today: the modern files, the modern era's strategy and its change
  // stream (client-eras.ts), and how the client opens a connection in either era.
  const modernFiles = ["era.ts", "input-required.ts", "modern-fetch.ts"];
  const modernStrategy = [
    "modernMessage",
    "ModernEra",
    "ListenFilter",
    "ACKNOWLEDGED",
    "listenFilter",
    "ChangeStreamInit",
    "ChangeStream",
  ];
  const modernOnlyMembers = ["#open", "#probe", "#adopt"];
  const shared = ["cacheToolMetadata"];
  const modernToday = [
    ...modernFiles.map(whole),
    part("client-eras.ts", modernStrategy),
    part("client.ts", modernOnlyMembers, { members: true }),
    modernBranches(shared),
  ].reduce(add, ZERO);

  // Of those, what v2's Client (and its Streamable HTTP transport) would do instead.
  const v2Takes = [
    part("era.ts", [
      "SUPPORTED_MODERN_VERSIONS",
      "META",
      "UNSUPPORTED_PROTOCOL_VERSION",
      "DiscoverResult",
      "Envelope",
      "envelopeMeta",
      "asDiscoverResult",
      "isModernVersion",
      "supportedVersionsOf",
      "refusedAsModernOnly",
      "probeFailure",
    ]),
    part("input-required.ts", ["ReadResult", "readResult"]),
    whole("modern-fetch.ts"),
    part("client-eras.ts", ["ListenFilter", "ACKNOWLEDGED"]),
    part("client.ts", modernOnlyMembers, { members: true }),
    modernBranches(shared),
  ].reduce(add, ZERO);
  // The modern parts the pool keeps on v2: verdicts it stores and ages (v2: "freshness is
  // the supplying host's responsibility"), the per-request envelope (as `_meta` keys), the
  // per-request answer loop (v2's auto-fulfilment answers by client, not by request: manual
  // mode, `allowInputRequired`, and the retry are the pool's), the stream's filter.
  const poolKeeps = add(modernToday, { lines: -v2Takes.lines, code: -v2Takes.code });

  // v2's Client also speaks legacy: the rest of the client goes with a move (the legacy
  // era and the seam the two eras share), and the protocol under it, and the output-schema
  // check (v2 validates structuredContent itself).
  const clientModern = add(
    part("client.ts", modernOnlyMembers, { members: true }),
    modernBranches(shared),
  );
  const legacyClient = [
    whole("protocol.ts"),
    whole("output-schema.ts"),
    add(whole("client.ts"), { lines: -clientModern.lines, code: -clientModern.code }),
    add(whole("client-eras.ts"), {
      lines: -part("client-eras.ts", modernStrategy).lines,
      code: -part("client-eras.ts", modernStrategy).code,
    }),
  ].reduce(add, ZERO);
  // Pool-specific either way.
  const poolSpecificFiles = [
    "stdio-transport.ts",
    "line-reader.ts",
    "stderr-tail.ts",
    "child-env.ts",
    "transport.ts",
    "challenges.ts",
    "fetch.ts",
    "http-transport.ts",
    "http-client.ts",
    "session-end.ts",
    "list-tools.ts",
    "server-requests.ts",
    "error.ts",
  ];
  const poolSpecific = poolSpecificFiles.map(whole).reduce(add, ZERO);
  return {
    total,
    modernToday,
    v2Takes,
    poolKeeps,
    legacyClient,
    poolSpecific,
    poolSpecificFiles,
    perFile: Object.fromEntries(files.map((file) => [file, whole(file).lines])),
  };
}

run("Upstream client", async () => {
  const loadStart = loadavg().map((x) => Number(x.toFixed(2)));
  note(`load average at start ${loadStart.join(" ")}`);
  const hops = {};
  const connect = {};
  for (const era of ["modern", "legacy"]) {
    hops[era] = await hop(era);
    note(
      `${era} echo p50/p99 ms: ${ARMS.map((arm) => `${arm} ${round(hops[era][arm].p50)}/${round(hops[era][arm].p99)}`).join(", ")}`,
    );
  }
  for (const era of ["modern", "legacy"]) {
    connect[era] = await connects(era);
    for (const mode of ["cold", "warm"]) {
      note(
        `${era} ${mode} connect / to first answer ms: ${ARMS.map((arm) => `${arm} ${round(connect[era][mode][arm].connect)}/${round(connect[era][mode][arm].firstCall)}`).join(", ")}`,
      );
    }
  }
  const mem = await memory();
  note(
    `fresh Node RSS MB (median of ${RSS_RUNS}): ${Object.entries(mem)
      .map(([arm, m]) => `${arm} ${round(m.rss)}`)
      .join(", ")}; heap ours ${round(mem.ours.heapUsed)}, v2 ${round(mem.v2.heapUsed)}`,
  );
  const found = await api();
  note(`v2 per request: ${JSON.stringify(found)}`);
  const lines = code();
  note(`code (lines): ${JSON.stringify({ ...lines, perFile: undefined })}`);
  const loadEnd = loadavg().map((x) => Number(x.toFixed(2)));
  note(`load average at end ${loadEnd.join(" ")}`);
  const load = { start: loadStart, end: loadEnd };

  const figures = [];
  for (const era of ["modern", "legacy"]) {
    for (const q of ["p50", "p99"]) {
      figures.push(
        figure({
          name: `upstreamClient.hop.${era}.${q}`,
          unit: "ms",
          value: hops[era].v2[q],
          baseline: hops[era].ours[q],
          baselineLabel: `McpClient on the pool's stdio transport (${era === "modern" ? "pinned 2026-07-28" : "legacy"})`,
          checks: [["ratio", "<=", 1.05]],
          v2OnPoolTransport: round(hops[era].v2OnPoolTransport[q]),
          calls: CALLS,
          load,
        }),
      );
    }
  }
  // The hop's difference carried into the daemon's hop figure (hop.mjs) (its upstream leg is this call).
  for (const [q, today] of [
    ["p50", HOP_P50_MS],
    ["p99", HOP_P99_MS],
  ]) {
    const worst = Math.max(
      hops.modern.v2[q] - hops.modern.ours[q],
      hops.legacy.v2[q] - hops.legacy.ours[q],
    );
    figures.push(
      figure({
        name: `upstreamClient.daemonHop.${q}.projected`,
        unit: "ms",
        value: today + worst,
        baseline: today,
        baselineLabel: `the hop figure: echo ${q} through the daemon (docs/performance.md), plus v2's worst ${q} difference of the two eras`,
        checks: [["ratio", "<=", 1.05]],
        load,
      }),
    );
  }
  for (const era of ["modern", "legacy"]) {
    for (const mode of ["cold", "warm"]) {
      const at = connect[era][mode];
      figures.push(
        figure({
          name: `upstreamClient.connect.${era}.${mode}`,
          unit: "ms",
          value: at.v2.firstCall,
          baseline: at.ours.firstCall,
          baselineLabel: `McpClient: spawn to the first echo answered, ${mode === "cold" ? "pinned" : "from a kept verdict (prior)"}`,
          connectMs: {
            ours: round(at.ours.connect),
            v2: round(at.v2.connect),
            v2OnPoolTransport: round(at.v2OnPoolTransport.connect),
          },
          v2OnPoolTransport: round(at.v2OnPoolTransport.firstCall),
          runs: RUNS,
          load,
        }),
      );
    }
  }
  figures.push(
    figure({
      name: "upstreamClient.rss.freshNode",
      unit: "MB",
      value: mem.v2.rss,
      baseline: mem.ours.rss,
      baselineLabel: "a fresh Node with McpClient, one modern and one legacy server, used once",
      bareMB: round(mem.bare.rss),
      heapUsedMB: { ours: round(mem.ours.heapUsed), v2: round(mem.v2.heapUsed) },
      samples: { ours: mem.ours.all.map(round), v2: mem.v2.all.map(round) },
      load,
    }),
    figure({
      name: "upstreamClient.rss.withV2ServerLoaded",
      unit: "MB",
      value: mem["v2+v2server"].rss,
      baseline: mem["ours+v2server"].rss,
      baselineLabel:
        "the same with SDK v2's server side loaded first (a daemon that served a modern host)",
      samples: {
        ours: mem["ours+v2server"].all.map(round),
        v2: mem["v2+v2server"].all.map(round),
      },
      load,
    }),
    figure({
      name: "upstreamClient.daemonIdleRss.projected",
      unit: "MB",
      value: IDLE_RSS_MB + (mem.v2.rss - mem.ours.rss),
      baseline: IDLE_RSS_MB,
      baselineLabel:
        "the memory figure: idle RSS (docs/performance.md), plus v2's RSS over McpClient's in a fresh Node",
      checks: [["ratio", "<=", 1.05]],
      load,
    }),
    figure({
      name: "upstreamClient.code.v2Takes",
      unit: "lines",
      value: lines.v2Takes.lines,
      baseline: lines.modernToday.lines,
      baselineLabel: "the era/modern parts of src/pool/mcp today",
      code: {
        v2Takes: lines.v2Takes.code,
        modernToday: lines.modernToday.code,
        poolKeeps: lines.poolKeeps,
        legacyClientAlsoGoes: lines.legacyClient,
        poolSpecificStays: lines.poolSpecific,
        total: lines.total,
      },
      perFile: lines.perFile,
    }),
    figure({
      name: "upstreamClient.api.perRequest",
      unit: null,
      value:
        found.v2CallerEnvelopeViaMeta && !found.v2AutoFulfilHandlerTold?.callerSignal
          ? "caller: _meta keys; answer: manual or subclass"
          : "see detail",
      baseline: null,
      ...found,
    }),
  );
  return figures;
});
