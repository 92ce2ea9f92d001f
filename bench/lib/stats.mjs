/** Order statistics over latency samples (ms). Nearest-rank percentiles, no interpolation. */

export function percentile(samples, p) {
  if (samples.length === 0) return NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function median(samples) {
  return percentile(samples, 50);
}

export function mean(samples) {
  return samples.reduce((sum, x) => sum + x, 0) / samples.length;
}
