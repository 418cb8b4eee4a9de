import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { test } from 'node:test';
import type { ReseedSink } from '../../../src/reseed/reseed-sink.js';
import { Reseeder } from '../../../src/reseed/reseeder.js';
import { writeFileAtomic } from '../../../src/store/atomic-write.js';
import { openDataDir } from '../../../src/store/data-dir.js';
import { RECORD_VERSION, serializeRecord, type LinksRecord } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';
import { normalizeUrl } from '../../../src/url/normalize.js';
import { tempDir } from '../../support/cli.js';
import { FakeClock } from '../../support/fake-clock.js';
import { nodeMount } from '../../../src/store/mount.js';

/**
 * The fallback of hand-offs (docs/protocol.md, "Hand-offs"): a writer that dies before it
 * sends its batch leaves links only in its links records. With hand-offs a node's ordinary
 * reseed reads only its own hosts' records; the full reseed that follows a node's leaving
 * reads every record and finds them.
 */
test("with hand-offs, only a full reseed reads other hosts' records (the fallback after a node left)", async (t) => {
  const dir = await tempDir('mountcrawl-handoff-reseed-');
  t.after(() => dir.cleanup());
  const { layout } = await openDataDir(dir.path, 'n1');
  const page = normalizeUrl('http://other.example/p');
  assert.ok(page.ok);
  await mkdir(layout.hostDir('links', page.hostDir));
  const record = {
    v: RECORD_VERSION,
    url: page.url,
    finalUrl: page.url,
    status: 200,
    contentType: 'text/html',
    bytes: 1,
    fetchedAt: '2025-01-15T12:00:00.000Z',
    depth: 0,
    node: 'dead-writer',
    durationMs: 1,
    html: null,
    links: ['http://mine.example/found'],
  } as LinksRecord;
  await writeFileAtomic(nodeMount, layout.links(page.hostDir, urlKey(page.url)), serializeRecord(record), {
    nodeId: 'dead-writer',
    fsync: false,
  });

  const offers: string[] = [];
  const sink: ReseedSink = {
    wantsHost: (h) => h.startsWith('mine.example'),
    prepareHosts: async () => undefined,
    addSeed: () => undefined,
    offer: (url) => {
      offers.push(url);
      return 'queued';
    },
  };
  const reseeder = new Reseeder(layout, { clock: new FakeClock(), serverTime: () => undefined });
  await reseeder.reseed(sink, false, 'own');
  assert.deepEqual(offers, [], "an ordinary reseed with hand-offs skips other hosts' records");
  await reseeder.reseed(sink, true, 'own');
  assert.deepEqual(offers, ['http://mine.example/found'], 'the full reseed finds the link');
});
