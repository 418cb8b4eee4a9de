/** Milliseconds per unit of a duration option (docs/recrawl.md). */
const UNITS: Readonly<Record<string, number>> = Object.freeze({
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
});

/**
 * Parses `0s`, `90m`, `7d`, `1.5h`, `500ms`, `2w` into milliseconds; undefined when the text
 * is not such a duration (the caller turns that into its own one-line error).
 */
export function parseDurationMs(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/i.exec(text);
  if (m === null) return undefined;
  const ms = Number(m[1]) * UNITS[m[2]!.toLowerCase()]!;
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}
