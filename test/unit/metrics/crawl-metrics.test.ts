import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FetchFailure } from '../../../src/errors.js';
import type { Fetcher } from '../../../src/fetch/fetcher.js';
import { crawlRegistry } from '../../../src/metrics/crawl-metrics.js';
import { sampleOf } from '../../../src/metrics/metric-sample.js';
import { CrawlStats } from '../../../src/progress/stats.js';
import { redirectPolicy, sendRequest } from '../../../src/request/pipeline.js';
import { fakeFetcher } from '../../support/fake-fetcher.js';

/** The value of the series `name{labels}` in a scrape, or undefined when there is none. */
function value(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

// src/metrics/crawl-metrics.ts (docs/operations.md, "Metrics").
describe('crawl metrics', () => {
  test('pages and requests by HTTP status, bytes, queued URLs, hosts held, errors by code, heartbeats, politeness waits', async () => {
    const stats = new CrawlStats(() => 0);
    for (const status of [200, 200, 301, 404, undefined]) stats.countRequest(status);
    stats.countPage(200, true);
    stats.countPage(200, true);
    stats.countPage(301, false);
    stats.countPage(200, false);
    stats.bytes = 1234;
    stats.queued = 7;
    stats.hostsOwned = 3;
    stats.countError('HTTP_404', true);
    stats.countError('FETCH_TIMEOUT', false);
    Object.assign(stats.heartbeats, { beats: 4, totalMs: 200, maxMs: 90 });
    stats.heldBack('delay', 0);
    const text = await crawlRegistry(() => [['n1', sampleOf(stats)]]).metrics();

    assert.equal(value(text, 'mountcrawl_pages_total', 'node="n1",kind="html",status="200"'), 2);
    assert.equal(value(text, 'mountcrawl_pages_total', 'node="n1",kind="other",status="301"'), 1);
    assert.equal(value(text, 'mountcrawl_pages_total', 'node="n1",kind="other",status="200"'), 1);
    assert.equal(value(text, 'mountcrawl_requests_total', 'node="n1",status="200"'), 2);
    assert.equal(value(text, 'mountcrawl_requests_total', 'node="n1",status="301"'), 1);
    assert.equal(value(text, 'mountcrawl_requests_total', 'node="n1",status="404"'), 1);
    assert.equal(value(text, 'mountcrawl_requests_total', 'node="n1",status="none"'), 1);
    assert.equal(stats.requests, 5, 'every request counted once, whatever its answer');
    assert.equal(stats.pages, 4);
    assert.equal(stats.htmlPages, 2);
    assert.equal(value(text, 'mountcrawl_bytes_total', 'node="n1"'), 1234);
    assert.equal(value(text, 'mountcrawl_queued_urls', 'node="n1"'), 7);
    assert.equal(value(text, 'mountcrawl_hosts_held', 'node="n1"'), 3);
    assert.equal(value(text, 'mountcrawl_errors_total', 'node="n1",code="HTTP_404"'), 1);
    assert.equal(value(text, 'mountcrawl_errors_total', 'node="n1",code="FETCH_TIMEOUT"'), 1);
    assert.equal(value(text, 'mountcrawl_final_errors_total', 'node="n1",code="HTTP_404"'), 1);
    assert.equal(value(text, 'mountcrawl_heartbeats_total', 'node="n1"'), 4);
    assert.equal(value(text, 'mountcrawl_heartbeat_seconds_total', 'node="n1"'), 0.2);
    assert.equal(value(text, 'mountcrawl_heartbeat_max_seconds', 'node="n1"'), 0.09);
    assert.equal(value(text, 'mountcrawl_politeness_waits_total', 'node="n1",rule="delay"'), 1);
    assert.match(text, /^# TYPE mountcrawl_requests_total counter$/m);
  });

  test('the request pipeline tells of each request sent: each redirect hop with its status, no answer as undefined', async () => {
    const { fetcher } = fakeFetcher({
      'http://a.example/': [301, { location: 'http://a.example/b' }],
      'http://a.example/b': [200, {}, '<p>b</p>'],
    });
    const sent: (number | undefined)[] = [];
    const spec = (url: string) => ({
      kind: 'page' as const,
      url,
      host: 'a.example',
      depth: 0,
      redirects: redirectPolicy('page', { hostDir: 'a.example', maxRedirects: 5 }),
    });
    const end = await sendRequest(spec('http://a.example/'), { fetcher, sent: (s) => sent.push(s) });
    assert.equal(end.requests, 2);
    assert.deepEqual(sent.slice(), [301, 200]);

    const failing = {
      async fetch(): Promise<never> {
        throw new FetchFailure('FETCH_TIMEOUT', 'transient', 'no answer');
      },
    } as unknown as Fetcher;
    const failed = await sendRequest(spec('http://a.example/'), { fetcher: failing, sent: (s) => sent.push(s) });
    assert.equal(failed.end.type, 'failure');
    assert.deepEqual(sent, [301, 200, undefined]);
  });
});
