/**
 * Figures as data: every bench script prints one JSON object per figure on stdout and a
 * table for people on stderr. A figure is a value measured beside its baseline in the same
 * run; `ratio` is always value / baseline, and `target` names the checks `met` was judged on.
 */
import { cpus, loadavg, platform, release, totalmem } from "node:os";
import process from "node:process";

export function environment() {
  const cpuList = cpus();
  return {
    node: process.version,
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model ?? "unknown",
    platform: `${platform()} ${release()}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    // Other work on the machine while the figure was taken: ratios hold up, absolutes less.
    loadavg1m: Number(loadavg()[0].toFixed(2)),
  };
}

const OPS = {
  "<=": (a, b) => a <= b,
  ">=": (a, b) => a >= b,
  "==": (a, b) => a === b,
};
const SHOWN = { "<=": "≤", ">=": "≥", "==": "=" };

/**
 * One figure. `checks` are `[subject, op, limit]` with subject "value" or "ratio"; `met` is
 * whether all hold. A figure without checks is informational (`met` null). `targetText`
 * replaces the target written from the checks when a limit is relative to the baseline.
 */
export function figure({
  name,
  unit,
  value,
  baseline,
  baselineLabel,
  checks = [],
  targetText,
  ...extra
}) {
  const ratio =
    typeof value === "number" && typeof baseline === "number" && baseline !== 0
      ? value / baseline
      : null;
  const subjects = { value, ratio };
  const met =
    checks.length === 0
      ? null
      : checks.every(([subject, op, limit]) => {
          const actual = subjects[subject];
          return typeof actual === "number" && OPS[op](actual, limit);
        });
  const target =
    targetText ??
    (checks.length === 0
      ? null
      : checks
          .map(([subject, op, limit]) =>
            subject === "ratio"
              ? `ratio ${SHOWN[op]} ${limit}`
              : `${SHOWN[op]} ${limit}${unit ? ` ${unit}` : ""}`,
          )
          .join(" and "));
  return {
    name,
    unit,
    value: round(value),
    baseline: round(baseline),
    ...(baselineLabel ? { baselineLabel } : {}),
    ratio: round(ratio),
    target,
    met,
    ...extra,
    environment: environment(),
  };
}

/** A figure that cannot be measured yet: said so, never invented. */
export function skipped(name, reason, extra = {}) {
  return { name, skipped: reason, ...extra, environment: environment() };
}

export function round(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return value ?? null;
  if (Number.isInteger(value)) return value;
  // Four significant digits, at most one decimal past 100: enough for a ratio of 0.0009.
  if (Math.abs(value) >= 100) return Number(value.toFixed(1));
  return Number(value.toPrecision(4));
}

/** Prints each figure as one JSON line on stdout. */
export function emit(figures) {
  for (const item of figures) process.stdout.write(`${JSON.stringify(item)}\n`);
}

function cellOf(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return String(round(value));
  return String(value);
}

/** The human table, on stderr. */
export function table(figures, title) {
  const rows = figures.map((item) =>
    item.skipped !== undefined
      ? [item.name, "skipped", "", "", item.skipped, ""]
      : [
          item.name,
          `${cellOf(item.value)} ${item.unit ?? ""}`.trim(),
          `${cellOf(item.baseline)} ${item.baseline === null ? "" : (item.unit ?? "")}`.trim(),
          item.ratio === null ? "–" : `${cellOf(item.ratio)}×`,
          item.target ?? "(info)",
          item.met === null ? "" : item.met ? "yes" : "NO",
        ],
  );
  const header = ["figure", "value", "baseline", "ratio", "target", "met"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join("  ");
  const out = [];
  if (title) out.push(`\n${title}`);
  out.push(line(header), widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) out.push(line(row));
  process.stderr.write(`${out.join("\n")}\n`);
}

/** Writes progress to stderr, never stdout (stdout carries the figures). */
export function note(message) {
  process.stderr.write(`  · ${message}\n`);
}
