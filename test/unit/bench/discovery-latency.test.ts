import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { discoveryLatency } from '../../../bench/discovery-latency.js';

const A = 'http://127.0.0.2:1000';
const B = 'http://127.0.0.3:1000';

/** Writes a links record of `url` by `node` listing `links`, committed at epoch ms `at`. */
async function record(dir: string, name: string, url: string, node: string, links: string[], at: number): Promise<void> {
  const host = join(dir, 'links', new URL(url).host.replace(':', '_'));
  await mkdir(host, { recursive: true });
  const path = join(host, `${name}.json`);
  await writeFile(path, JSON.stringify({ url, node, links }));
  await utimes(path, at / 1000, at / 1000);
}

test('discovery latency: a link found by one node and fetched by another counts across nodes, from the commit of the first record that lists it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-discovery-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const t0 = 1_800_000_000_000;
  // n1 fetched A/ (a seed) and committed it at t0: it lists A/p/1 (n1's own) and B/p/1 (n2's).
  await record(dir, 'a0', `${A}/`, 'n1', [`${A}/p/1.html`, `${B}/p/1.html`], t0);
  // A later record of n2 also lists B/p/1: the first one counts.
  await record(dir, 'b0', `${B}/`, 'n2', [`${B}/p/1.html`], t0 + 500);
  await record(dir, 'a1', `${A}/p/1.html`, 'n1', [], t0 + 400);
  await record(dir, 'b1', `${B}/p/1.html`, 'n2', [], t0 + 1_300);
  const requests = new Map([
    [`${A}/`, [t0 - 100]],
    [`${B}/`, [t0 - 100, t0 + 400]],
    [`${A}/p/1.html`, [t0 + 300]],
    // Host B busy from t0 + 400 to t0 + 500 (its / again), then idle until B/p/1 at t0 + 1,200.
    [`${B}/p/1.html`, [t0 + 1_200]],
  ]);
  const d = await discoveryLatency(dir, requests, { serviceMs: 100, slots: 4, seeds: new Set([`${A}/`, `${B}/`]) });
  assert.deepEqual(d.crossNode, { count: 1, medianMs: 1_200, p95Ms: 1_200, maxMs: 1_200 });
  assert.deepEqual(d.sameNode, { count: 1, medianMs: 300, p95Ms: 300, maxMs: 300 });
  // 1,200 ms less the 100 ms host B was busy.
  assert.equal(d.crossNodeIdle.medianMs, 1_100);
});

test('discovery latency: time the fetching node had no free slot is not idle', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-discovery-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const t0 = 1_800_000_000_000;
  await record(dir, 'a0', `${A}/`, 'n1', [`${B}/p/1.html`], t0);
  await record(dir, 'b0', `${B}/`, 'n2', [], t0);
  await record(dir, 'b1', `${B}/p/1.html`, 'n2', [], t0 + 1_000);
  await record(dir, 'c0', 'http://127.0.0.4:1000/', 'n2', [], t0);
  const requests = new Map([
    [`${A}/`, [t0 - 400]],
    // Host B and n2's slot busy until t0 - 100: before the link was found.
    [`${B}/`, [t0 - 400]],
    // n2's only slot (slots: 1) is busy with another host from t0 + 200 to t0 + 500.
    ['http://127.0.0.4:1000/', [t0 + 200]],
    [`${B}/p/1.html`, [t0 + 900]],
  ]);
  const d = await discoveryLatency(dir, requests, { serviceMs: 300, slots: 1, seeds: new Set() });
  const b1 = 900;
  assert.equal(d.crossNode.maxMs, b1);
  assert.equal(d.crossNodeIdle.maxMs, b1 - 300);
});
