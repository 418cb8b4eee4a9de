/**
 * Crawler-trap rules that look at a URL alone (docs/options.md, "Limits and traps"; applied by src/frontier/admission/). Pure functions, so the
 * same URL is judged the same on every node and in every round.
 */

/**
 * True when one path segment occurs `max` or more times in the path
 * (`/a/b/a/b/a/b/` with max 3): the sign of relative links that keep nesting.
 */
export function hasRepeatedSegment(url: string, max: number): boolean {
  if (!Number.isFinite(max)) return false;
  const withQuery = pathOf(url);
  const q = withQuery.indexOf('?');
  const path = q < 0 ? withQuery : withQuery.slice(0, q);
  const counts = new Map<string, number>();
  for (const seg of path.split('/')) {
    if (seg === '') continue;
    const n = (counts.get(seg) ?? 0) + 1;
    if (n >= max) return true;
    counts.set(seg, n);
  }
  return false;
}

/**
 * The "shape" of a URL for the per-pattern budget: its path with every run of digits
 * replaced by `0`, and its query reduced to parameter names with digit runs replaced too.
 * `/cal/2024/01?day=3` and `/cal/1999/12?day=17` share the shape `/cal/0/0?day`, so an
 * endless generated calendar uses up one budget instead of looking new forever.
 */
export function urlShape(url: string): string {
  const path = pathOf(url);
  const q = path.indexOf('?');
  const p = (q < 0 ? path : path.slice(0, q)).replace(/[0-9]+/g, '0');
  if (q < 0) return p;
  const names = path
    .slice(q + 1)
    .split('&')
    .map((kv) => kv.split('=')[0]!.replace(/[0-9]+/g, '0'));
  return `${p}?${names.join('&')}`;
}

function pathOf(url: string): string {
  const s = url.indexOf('://');
  const slash = url.indexOf('/', s < 0 ? 0 : s + 3);
  return slash < 0 ? '/' : url.slice(slash);
}
