import type { FetchedResponse, Fetcher } from '../../src/fetch/fetcher.js';

/** What the fake site answers: status, headers, and an HTML body if any. */
export type Answer = [number, Record<string, string>, string?];

/** A fetcher that answers from a table of URL -> answer (or answers, one per request, the last repeated) and records what was asked. */
export function fakeFetcher(site: Record<string, Answer | Answer[]>): { fetcher: Fetcher; asked: string[] } {
  const asked: string[] = [];
  const fetcher = {
    async fetch(url: string): Promise<FetchedResponse> {
      const nth = asked.filter((u) => u === url).length;
      asked.push(url);
      const entry = site[url] ?? [404, {}];
      const list = (Array.isArray(entry[0]) ? entry : [entry]) as Answer[];
      const [status, headers, body] = list[Math.min(nth, list.length - 1)]!;
      const html = body !== undefined;
      return {
        url,
        status,
        headers: { ...headers, ...(html ? { 'content-type': 'text/html' } : {}) },
        mediaType: html ? 'text/html' : null,
        contentType: html ? 'text/html' : null,
        body: html ? Buffer.from(body) : null,
        truncated: false,
        durationMs: 1,
      };
    },
    async close(): Promise<void> {},
  } as unknown as Fetcher;
  return { fetcher, asked };
}
