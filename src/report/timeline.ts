/** The series of a timeline. */
export type Series = 'pages' | 'errors' | 'links';

/** A timeline as the report draws it: equal buckets from `start`. */
export interface TimelineData {
  /** Start of the first bucket, ISO 8601; null when there is nothing. */
  readonly start: string | null;
  readonly bucketSeconds: number;
  /** Per bucket: pages fetched (their fetchedAt), errors (their lastAt), links found. */
  readonly pages: number[];
  readonly errors: number[];
  readonly links: number[];
}

/** Most buckets kept while reading; past it they are merged two by two. */
const MAX_BUCKETS = 100_000;
/** Most points drawn. */
const MAX_POINTS = 240;
const NICE_SECONDS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];

/**
 * Counts events into time buckets in any order (records are read in directory order, not
 * time order), with memory bounded by MAX_BUCKETS whatever the length of the crawl.
 */
export class Timeline {
  #bucketMs = 1000;
  readonly #buckets = new Map<number, [number, number, number]>();

  add(timeMs: number, series: Series, n: number): void {
    if (!Number.isFinite(timeMs)) return;
    const b = Math.floor(timeMs / this.#bucketMs);
    let counts = this.#buckets.get(b);
    if (counts === undefined) {
      this.#buckets.set(b, (counts = [0, 0, 0]));
      if (this.#buckets.size > MAX_BUCKETS) this.#coarsen();
      counts = this.#buckets.get(Math.floor(timeMs / this.#bucketMs))!;
    }
    counts[series === 'pages' ? 0 : series === 'errors' ? 1 : 2] += n;
  }

  #coarsen(): void {
    const old = [...this.#buckets.entries()];
    this.#buckets.clear();
    this.#bucketMs *= 2;
    for (const [b, c] of old) {
      const nb = Math.floor(b / 2);
      const into = this.#buckets.get(nb);
      if (into === undefined) this.#buckets.set(nb, [...c]);
      else for (let i = 0; i < 3; i++) into[i]! += c[i]!;
    }
  }

  /** At most MAX_POINTS buckets of a round size (1 s, 5 s, 1 min ...) covering every event. */
  data(): TimelineData {
    if (this.#buckets.size === 0) return { start: null, bucketSeconds: 1, pages: [], errors: [], links: [] };
    let min = Infinity;
    let max = -Infinity;
    for (const b of this.#buckets.keys()) {
      min = Math.min(min, b);
      max = Math.max(max, b);
    }
    const startMs = min * this.#bucketMs;
    const spanMs = (max + 1) * this.#bucketMs - startMs;
    const seconds =
      NICE_SECONDS.find((s) => s * 1000 >= this.#bucketMs && spanMs / (s * 1000) <= MAX_POINTS) ?? Math.ceil(spanMs / MAX_POINTS / 1000);
    const width = seconds * 1000;
    const first = Math.floor(startMs / width) * width;
    const n = Math.floor(((max + 1) * this.#bucketMs - 1 - first) / width) + 1;
    const out = { pages: new Array<number>(n).fill(0), errors: new Array<number>(n).fill(0), links: new Array<number>(n).fill(0) };
    for (const [b, c] of this.#buckets) {
      const i = Math.floor((b * this.#bucketMs - first) / width);
      out.pages[i]! += c[0];
      out.errors[i]! += c[1];
      out.links[i]! += c[2];
    }
    return { start: new Date(first).toISOString(), bucketSeconds: seconds, ...out };
  }
}
