/** Resource figures for people: memory, CPU, latency and a sparkline, each short. */
import type { ServerResources } from "mcpool-protocol";

const MB = 1024 * 1024;

/** `812K`, `54M`, `1.2G`: fits a 5-character cell. */
export function bytes(value: number | undefined): string {
  if (value === undefined) return "-";
  if (value < MB) return `${Math.round(value / 1024)}K`;
  if (value < 1024 * MB) return `${Math.round(value / MB)}M`;
  return `${(value / (1024 * MB)).toFixed(1)}G`;
}

export function percent(value: number | undefined): string {
  return value === undefined ? "-" : `${value.toFixed(value < 10 ? 1 : 0)}%`;
}

export function ms(value: number | undefined): string {
  if (value === undefined) return "-";
  if (value < 10) return `${value.toFixed(1)}ms`;
  return value < 1000 ? `${Math.round(value)}ms` : `${(value / 1000).toFixed(1)}s`;
}

/** The row's memory, with its limit when one applies: `54M/200M`. */
export function memory(resources: ServerResources | undefined): string {
  const rss = bytes(resources?.rssBytes);
  return resources?.maxMemoryMb !== undefined ? `${rss}/${resources.maxMemoryMb}M` : rss;
}

const BARS = "▁▂▃▄▅▆▇█";

/** One character per value, scaled to the largest; a space for none at all. */
export function sparkline(values: readonly number[]): string {
  const top = Math.max(...values, 0);
  return values
    .map((value) =>
      value === 0
        ? " "
        : BARS[Math.min(BARS.length - 1, Math.floor((value / top) * (BARS.length - 1)))],
    )
    .join("");
}
