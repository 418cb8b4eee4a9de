import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { OfferResult } from '../../../src/frontier/admission/admission.js';
import type { ReseedSink } from '../../../src/reseed/reseed-sink.js';
import { Reseeder } from '../../../src/reseed/reseeder.js';
import { writeSeeds } from '../../../src/reseed/seeds.js';
import { writeFileAtomic } from '../../../src/store/atomic-write.js';
import { openDataDir } from '../../../src/store/data-dir.js';
import type { Layout } from '../../../src/store/layout.js';
import { RECORD_VERSION, serializeRecord, type ErrsRecord, type LinksRecord, type Referrer } from '../../../src/store/records.js';
import { urlKey } from '../../../src/url/key.js';
import { normalizeUrl } from '../../../src/url/normalize.js';
import { FakeClock } from '../../support/fake-clock.js';
import { hookFs } from '../../support/fs-hook.js';
import { nodeMount } from '../../../src/store/mount.js';

const WRITER = 'ws9-900';
const HOUR_AGO = (Date.now() - 3_600_000) / 1000;

let root: string;
let counter = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mountcrawl-reseeder-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshLayout(): Promise<Layout> {
  return (await openDataDir(join(root, `t${counter++}`), WRITER)).layout;
}

function norm(url: string): { url: string; hostDir: string; key: string } {
  const n = normalizeUrl(url);
  if (!n.ok) throw new Error(url);
  return { url: n.url, hostDir: n.hostDir, key: urlKey(n.url) };
}

/** Writes the links record of `pageUrl` as a node would (atomic, serializeRecord). */
async function writeLinks(layout: Layout, pageUrl: string, depth: number, links: readonly unknown[]): Promise<string> {
  const { url, hostDir, key } = norm(pageUrl);
  await mkdir(layout.hostDir('links', hostDir), { recursive: true });
  const record = {
    v: RECORD_VERSION,
    url,
    finalUrl: url,
    status: 200,
    contentType: 'text/html',
    bytes: 100,
    fetchedAt: '2025-01-15T12:00:00.000Z',
    depth,
    node: WRITER,
    durationMs: 3,
    html: null,
    links,
  } as LinksRecord;
  await writeFileAtomic(nodeMount, layout.links(hostDir, key), serializeRecord(record), { nodeId: WRITER, fsync: false });
  return key;
}

async function writeErrs(layout: Layout, pageUrl: string): Promise<void> {
  const { url, hostDir, key } = norm(pageUrl);
  await mkdir(layout.hostDir('errs', hostDir), { recursive: true });
  const record: ErrsRecord = {
    v: RECORD_VERSION,
    url,
    code: 'HTTP_503',
    message: 'HTTP 503',
    final: false,
    attempts: 1,
    firstAt: '2025-01-15T12:00:00.000Z',
    lastAt: '2025-01-15T12:00:00.000Z',
    nextAttemptAt: '2025-01-15T12:01:00.000Z',
    depth: 1,
    node: WRITER,
  };
  await writeFileAtomic(nodeMount, layout.errs(hostDir, key), serializeRecord(record), { nodeId: WRITER, fsync: false });
}

/** Sets the mtime of links/<host> an hour back: well settled by the mount's clock. */
async function settle(layout: Layout, ...hostDirs: string[]): Promise<void> {
  for (const h of hostDirs) await utimes(layout.hostDir('links', h), HOUR_AGO, HOUR_AGO);
}

/** A sink that wants some hosts, takes each URL once, and answers `full` for chosen URLs. */
class Sink implements ReseedSink {
  readonly offers: string[] = [];
  readonly prepared: string[][] = [];
  readonly seeds: string[] = [];
  readonly full = new Set<string>();
  /** The referrer of each URL's first offer. */
  readonly referrers = new Map<string, Referrer | undefined>();
  readonly #taken = new Set<string>();
  constructor(readonly wanted: Set<string>) {}

  wantsHost(hostDir: string): boolean {
    return this.wanted.has(hostDir);
  }

  async prepareHosts(hostDirs: readonly string[]): Promise<void> {
    this.prepared.push([...hostDirs].sort());
  }

  addSeed(raw: string): { url: string; hostDir: string } | undefined {
    this.seeds.push(raw);
    const n = normalizeUrl(raw);
    return n.ok ? { url: n.url, hostDir: n.hostDir } : undefined;
  }

  offer(url: string, hostDir: string, depth: number, referrer?: Referrer): OfferResult {
    assert.equal(hostDir, norm(url).hostDir, 'offered with its own host directory');
    if (!this.referrers.has(url)) this.referrers.set(url, referrer);
    this.offers.push(`${url} @${depth}`);
    if (this.full.has(url)) return 'full';
    if (this.#taken.has(url)) return 'known';
    this.#taken.add(url);
    return 'queued';
  }

  /** The offers since the last call, sorted. */
  take(): string[] {
    return this.offers.splice(0).sort();
  }
}

/**
 * a.example and b.example are wanted, c.example is not; d.example has only an errs record.
 * Links to every host are in every host's records.
 */
async function crawlOnDisk(layout: Layout): Promise<{ a1: string; a2: string }> {
  const a1 = await writeLinks(layout, 'http://a.example/a1', 0, ['http://a.example/x1', 'http://b.example/y1', 'http://c.example/z1']);
  const a2 = await writeLinks(layout, 'http://a.example/a2', 3, ['http://a.example/x2']);
  await writeLinks(layout, 'http://b.example/b1', 5, []);
  await writeLinks(layout, 'http://c.example/c1', 1, ['http://a.example/x3', 'http://c.example/z2']);
  await writeErrs(layout, 'http://d.example/broken');
  await settle(layout, 'a.example', 'b.example', 'c.example');
  return { a1, a2 };
}

const FIRST_OFFERS = ['http://a.example/x1 @1', 'http://a.example/x2 @4', 'http://a.example/x3 @2', 'http://b.example/y1 @1'];

/** A reseeder whose view of the mount's clock the test sets (undefined: not known yet). */
function reseederFor(layout: Layout): { reseeder: Reseeder; server: { time: { mtimeMs: number } | undefined } } {
  const server: { time: { mtimeMs: number } | undefined } = { time: { mtimeMs: Date.now() } };
  return { reseeder: new Reseeder(layout, { clock: new FakeClock(), serverTime: () => server.time }), server };
}

describe('Reseeder: links records', () => {
  test('the first reseed offers every link of wanted hosts, at depth + 1, from every host’s records', async () => {
    const layout = await freshLayout();
    await crawlOnDisk(layout);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example', 'b.example', 'd.example']));
    const stats = await reseeder.reseed(sink, false);
    assert.deepEqual(sink.take(), FIRST_OFFERS);
    // Each link is offered with the record it came from (docs/protocol.md, errs records: referrer).
    assert.deepEqual(sink.referrers.get('http://a.example/x2'), { url: 'http://a.example/a2', depth: 3 });
    assert.deepEqual(sink.referrers.get('http://a.example/x3'), { url: 'http://c.example/c1', depth: 1 });
    assert.deepEqual(sink.prepared, [['a.example', 'b.example', 'd.example']], 'wanted hosts with files, errs/ included');
    assert.equal(stats.recordsRead, 4);
    assert.equal(stats.queued, 4);
    assert.equal(stats.dirsListed, 3);
    assert.equal(stats.dirsSkipped, 0);
    assert.equal(stats.seedsRead, 0);
    assert.equal(stats.durationMs, 0, 'timed with the injected clock');
  });

  test('a second reseed with nothing new reads no record and skips every settled directory', async () => {
    const layout = await freshLayout();
    await crawlOnDisk(layout);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example', 'b.example']));
    await reseeder.reseed(sink, false);
    sink.take();
    const stats = await reseeder.reseed(sink, false);
    assert.deepEqual(sink.take(), []);
    assert.equal(stats.recordsRead, 0);
    assert.equal(stats.dirsSkipped, 3);
    assert.equal(stats.dirsListed, 0);
    assert.equal(stats.queued, 0);
  });

  test('without the mount clock nothing counts as settled: directories are listed again, records not reread', async () => {
    const layout = await freshLayout();
    await crawlOnDisk(layout);
    const { reseeder, server } = reseederFor(layout);
    server.time = undefined;
    const sink = new Sink(new Set(['a.example', 'b.example']));
    await reseeder.reseed(sink, false);
    sink.take();
    const stats = await reseeder.reseed(sink, false);
    assert.equal(stats.dirsListed, 3);
    assert.equal(stats.dirsSkipped, 0);
    assert.equal(stats.recordsRead, 0);
    assert.deepEqual(sink.take(), []);
  });

  test('a directory changed less than 2 s before the mount clock is not settled', async () => {
    const layout = await freshLayout();
    await crawlOnDisk(layout);
    const fresh = Date.now() / 1000;
    await utimes(layout.hostDir('links', 'a.example'), fresh, fresh);
    const { reseeder, server } = reseederFor(layout);
    server.time = { mtimeMs: fresh * 1000 + 1_000 };
    const sink = new Sink(new Set(['a.example', 'b.example']));
    await reseeder.reseed(sink, false);
    const stats = await reseeder.reseed(sink, false);
    assert.equal(stats.dirsListed, 1, 'a.example is listed again');
    assert.equal(stats.dirsSkipped, 2);
  });

  test('a new record in a settled directory is found, and only it is read', async () => {
    const layout = await freshLayout();
    await crawlOnDisk(layout);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example', 'b.example']));
    await reseeder.reseed(sink, false);
    sink.take();
    await writeLinks(layout, 'http://b.example/b2', 6, ['http://a.example/x9', 'http://a.example/x1']);
    const stats = await reseeder.reseed(sink, false);
    assert.deepEqual(sink.take(), ['http://a.example/x1 @7', 'http://a.example/x9 @7']);
    assert.equal(stats.recordsRead, 1);
    assert.equal(stats.dirsListed, 1);
    assert.equal(stats.dirsSkipped, 2);
    assert.equal(stats.queued, 1, 'x1 was known already');
  });

  test('full rereads every record, settled or not', async () => {
    const layout = await freshLayout();
    await crawlOnDisk(layout);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example']));
    await reseeder.reseed(sink, false);
    sink.take();
    // Now this node gained b.example (another node left): links to it were skipped before.
    sink.wanted.add('b.example');
    const stats = await reseeder.reseed(sink, true);
    assert.equal(stats.recordsRead, 4);
    assert.equal(stats.dirsListed, 3);
    assert.equal(stats.dirsSkipped, 0);
    assert.deepEqual(sink.take(), FIRST_OFFERS);
    assert.equal(stats.queued, 1, 'only y1 is new');
  });

  test('a full reseed asked for stays due until one that began after the ask ends without an error', async () => {
    const layout = await freshLayout();
    await crawlOnDisk(layout);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example']));
    assert.equal(reseeder.fullDue, false);
    reseeder.wantFull();
    assert.equal(reseeder.fullDue, true);
    // Asked again while this full reseed runs (hosts gained under it): still due after it.
    const prepare = sink.prepareHosts.bind(sink);
    sink.prepareHosts = async (hostDirs) => {
      reseeder.wantFull();
      await prepare(hostDirs);
    };
    await reseeder.reseed(sink, true);
    assert.equal(reseeder.fullDue, true, 'asked during the reseed');
    sink.prepareHosts = prepare;
    await reseeder.reseed(sink, false);
    assert.equal(reseeder.fullDue, true, 'a reseed that is not full answers no ask');
    sink.prepareHosts = async () => {
      throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
    };
    await assert.rejects(reseeder.reseed(sink, true));
    sink.prepareHosts = prepare;
    assert.equal(reseeder.fullDue, true, 'a full reseed that failed answers no ask');
    await reseeder.reseed(sink, true);
    assert.equal(reseeder.fullDue, false);
  });

  test("a record with a link the sink could not take ('full') is read again next time; the others are not", async () => {
    const layout = await freshLayout();
    await crawlOnDisk(layout);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example', 'b.example']));
    sink.full.add('http://a.example/x2');
    await reseeder.reseed(sink, false);
    sink.take();
    sink.full.clear();
    const second = await reseeder.reseed(sink, false);
    assert.deepEqual(sink.take(), ['http://a.example/x2 @4']);
    assert.equal(second.recordsRead, 1);
    assert.equal(second.dirsListed, 1, 'its directory was not settled');
    assert.equal(second.queued, 1);
    const third = await reseeder.reseed(sink, false);
    assert.equal(third.recordsRead, 0);
    assert.equal(third.dirsSkipped, 3);
  });

  test('a record that could not be read for an I/O error is read again at the next reseed', async () => {
    const layout = await freshLayout();
    const { a2 } = await crawlOnDisk(layout);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example', 'b.example']));
    const failing = layout.links('a.example', a2);
    type Open = (path: string, ...rest: unknown[]) => void;
    const restore = hookFs<Open>('open', (original) => (path, ...rest) => {
      if (String(path) !== failing) return original(path, ...rest);
      const callback = rest[rest.length - 1] as (err: Error) => void;
      process.nextTick(callback, Object.assign(new Error(`EIO: i/o error, open '${failing}'`), { code: 'EIO' }));
    });
    try {
      // Either way is fine here: the reseed may report the mount fault or go on without it.
      await reseeder.reseed(sink, false).catch(() => undefined);
    } finally {
      restore();
    }
    assert.ok(!sink.take().includes('http://a.example/x2 @4'), 'the mount failed that read');
    await reseeder.reseed(sink, false);
    // A reseed that hit a fault stops; whatever it did not read (that record at least) comes now.
    assert.ok(sink.take().includes('http://a.example/x2 @4'));
  });

  test('markRead keeps this node from rereading its own records', async () => {
    const layout = await freshLayout();
    const { a1 } = await crawlOnDisk(layout);
    const { reseeder } = reseederFor(layout);
    reseeder.markRead('a.example', a1);
    const sink = new Sink(new Set(['a.example', 'b.example']));
    const stats = await reseeder.reseed(sink, false);
    assert.equal(stats.recordsRead, 3);
    assert.deepEqual(sink.take(), ['http://a.example/x2 @4', 'http://a.example/x3 @2']);
  });

  test('names that are not records, hidden temp files, unsafe directories and unusable links are ignored', async () => {
    const layout = await freshLayout();
    await writeLinks(layout, 'http://a.example/ok', 0, [42, null, 'http://a.example/fine', 'not a url', 'http://../x']);
    const dir = layout.hostDir('links', 'a.example');
    const junkKey = norm('http://a.example/junk').key;
    await writeFile(
      join(dir, 'notakey.json'),
      serializeRecord({ url: 'http://a.example/n', depth: 0, links: ['http://a.example/n1'] } as unknown as LinksRecord),
    );
    await writeFile(
      join(dir, `.${junkKey}.json~${WRITER}~zz0001.tmp`),
      '{"url":"http://a.example/t","depth":0,"links":["http://a.example/t1"]}',
    );
    await writeFile(join(dir, `${junkKey}.json`), '{"url": "torn');
    await mkdir(join(layout.dir('links'), 'UPPER.example'));
    await writeFile(
      join(layout.dir('links'), 'UPPER.example', `${junkKey}.json`),
      '{"url":"http://a.example/u","depth":0,"links":["http://a.example/u1"]}',
    );
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example', 'UPPER.example']));
    const stats = await reseeder.reseed(sink, false);
    assert.deepEqual(sink.take(), ['http://a.example/fine @1']);
    assert.equal(stats.recordsRead, 1, 'the torn record is not counted');
    assert.deepEqual(sink.prepared, [['a.example']]);
  });

  test('an empty data directory: nothing to do', async () => {
    const layout = await freshLayout();
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example']));
    const stats = await reseeder.reseed(sink, false);
    assert.deepEqual(stats, { queued: 0, recordsRead: 0, summariesRead: 0, dirsListed: 0, dirsSkipped: 0, seedsRead: 0, durationMs: 0 });
    assert.deepEqual(sink.prepared, [[]]);
  });
});

/** The crawl on disk, after a first reseed of scope 'own' (its offers taken) by a node wanting `wanted`. */
async function afterOwnReseed(wanted: readonly string[]) {
  const layout = await freshLayout();
  await crawlOnDisk(layout);
  const { reseeder, server } = reseederFor(layout);
  const sink = new Sink(new Set(wanted));
  const first = await reseeder.reseed(sink, false, 'own');
  return { layout, reseeder, server, sink, firstOffers: sink.take(), first };
}

describe('Reseeder: scope (with hand-offs)', () => {
  test("'own' lists only the wanted hosts' directories; another host's new record is not read", async () => {
    const { layout, reseeder, sink, firstOffers } = await afterOwnReseed(['a.example']);
    assert.deepEqual(firstOffers, ['http://a.example/x1 @1', 'http://a.example/x2 @4'], "only a.example's records");
    await writeLinks(layout, 'http://c.example/c2', 0, ['http://a.example/x7']);
    const stats = await reseeder.reseed(sink, false, 'own');
    assert.deepEqual(sink.take(), [], "c.example's record reaches a.example's owner as a hand-off");
    assert.equal(stats.dirsSkipped, 1, 'one stat, of a.example');
  });

  test("'own-unsettled' does not look at a settled directory, not even with a stat; 'own' does", async () => {
    const { layout, reseeder, sink } = await afterOwnReseed(['a.example', 'b.example']);
    // Written by some other node (under host leases only a.example's owner writes there).
    await writeLinks(layout, 'http://a.example/a9', 0, ['http://a.example/x9']);
    const light = await reseeder.reseed(sink, false, 'own-unsettled');
    assert.deepEqual(sink.take(), []);
    assert.deepEqual([light.dirsListed, light.dirsSkipped, light.recordsRead], [0, 0, 0]);
    const own = await reseeder.reseed(sink, false, 'own');
    assert.deepEqual(sink.take(), ['http://a.example/x9 @1']);
    assert.equal(own.recordsRead, 1);
  });

  test("'own-unsettled' lists a directory this node unsettled (a link that did not fit, a host let go)", async () => {
    const { layout, reseeder, sink } = await afterOwnReseed(['a.example', 'b.example']);
    await writeLinks(layout, 'http://a.example/a9', 0, ['http://a.example/x9']);
    reseeder.unsettle('a.example');
    const stats = await reseeder.reseed(sink, false, 'own-unsettled');
    assert.deepEqual(sink.take(), ['http://a.example/x9 @1']);
    assert.deepEqual([stats.dirsListed, stats.recordsRead], [1, 1]);
  });

  test("'own-unsettled' lists a wanted directory it never listed, and one whose listing was not settled", async () => {
    const { layout, reseeder, server, sink } = await afterOwnReseed(['a.example', 'b.example']);
    sink.wanted.add('e.example');
    await writeLinks(layout, 'http://e.example/e1', 0, ['http://e.example/f1']);
    server.time = { mtimeMs: Date.now() - 60_000 }; // e.example's listing cannot settle
    const first = await reseeder.reseed(sink, false, 'own-unsettled');
    assert.deepEqual(sink.take(), ['http://e.example/f1 @1']);
    assert.equal(first.dirsListed, 1);
    const second = await reseeder.reseed(sink, false, 'own-unsettled');
    assert.equal(second.dirsListed, 1, 'listed again: not settled');
    assert.equal(second.recordsRead, 0);
  });
});

describe('Reseeder: seeds', () => {
  test('seeds are read once; those of wanted hosts are offered at depth 0; unusable ones are not retried', async () => {
    const layout = await freshLayout();
    await writeSeeds(layout, ['http://a.example/', 'http://b.example/s', 'http://c.example/'], WRITER);
    await writeFile(join(layout.dir('seeds'), `${'0'.repeat(56)}.url`), 'not a url\n');
    await writeFile(join(layout.dir('seeds'), 'README.txt'), 'http://a.example/readme');
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example', 'b.example']));
    const first = await reseeder.reseed(sink, false);
    assert.equal(first.seedsRead, 4);
    assert.deepEqual(sink.seeds.sort(), ['http://a.example/', 'http://b.example/s', 'http://c.example/', 'not a url']);
    assert.deepEqual(sink.take(), ['http://a.example/ @0', 'http://b.example/s @0']);
    assert.equal(first.queued, 2);
    const second = await reseeder.reseed(sink, false);
    assert.equal(second.seedsRead, 0);
    assert.equal(sink.seeds.length, 4);
    assert.deepEqual(sink.take(), []);
  });

  test("a seed the sink could not take ('full') is read again", async () => {
    const layout = await freshLayout();
    await writeSeeds(layout, ['http://a.example/', 'http://a.example/later'], WRITER);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example']));
    sink.full.add('http://a.example/later');
    await reseeder.reseed(sink, false);
    sink.take();
    sink.full.clear();
    const second = await reseeder.reseed(sink, false);
    assert.equal(second.seedsRead, 1);
    assert.deepEqual(sink.take(), ['http://a.example/later @0']);
  });

  test('a full reseed offers a seed of a host this node did not want before', async () => {
    const layout = await freshLayout();
    await writeSeeds(layout, ['http://c.example/'], WRITER);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set(['a.example']));
    await reseeder.reseed(sink, false);
    assert.deepEqual(sink.take(), []);
    // The node that owned c.example died before fetching its seed; this node gains c.example.
    sink.wanted.add('c.example');
    await reseeder.reseed(sink, true);
    assert.deepEqual(sink.take(), ['http://c.example/ @0']);
  });
});

describe('Reseeder: a big scan read by worker threads', () => {
  test('every link offered at its lowest depth, records taken once, a bad record skipped, full links offered again', async () => {
    const layout = await freshLayout();
    const hosts = ['a.example', 'b.example', 'c.example'];
    const expected = new Map<string, number>(); // url -> lowest depth offered
    for (const h of hosts) {
      for (let j = 0; j < 300; j++) {
        const depth = j % 5;
        const links = [
          `http://${h}/p${(j * 7) % 50}`,
          `http://${h}/p${(j * 3) % 50}`,
          `http://other.example/q${j % 20}`,
          `http://unwanted.example/u${j}`,
        ];
        await writeLinks(layout, `http://${h}/page-${j}`, depth, links);
        for (const l of links.slice(0, 3)) expected.set(l, Math.min(expected.get(l) ?? 99, depth + 1));
      }
    }
    // A file that is not a record: skipped, as on the main thread.
    await writeFile(join(layout.hostDir('links', 'b.example'), `${'e'.repeat(56)}.json`), '{"v": 1, "url": ');
    await settle(layout, ...hosts);
    const { reseeder } = reseederFor(layout);
    const sink = new Sink(new Set([...hosts, 'other.example']));
    sink.full.add('http://a.example/p0');
    const stats = await reseeder.reseed(sink, false);
    const lowest = new Map<string, number>();
    for (const o of sink.take()) {
      const [url, at] = o.split(' @') as [string, string];
      lowest.set(url, Math.min(lowest.get(url) ?? 99, Number(at)));
    }
    assert.deepEqual([...lowest].sort(), [...expected].sort());
    assert.equal(stats.recordsRead, 900);
    assert.equal(stats.queued, expected.size - 1);
    // The records whose link did not fit are read again next time, and only those.
    sink.full.clear();
    const again = await reseeder.reseed(sink, false);
    assert.ok(again.recordsRead > 0 && again.recordsRead < 300, `${again.recordsRead} records read again`);
    assert.deepEqual(sink.take().filter((o) => o.startsWith('http://a.example/p0 ')).length > 0, true);
    assert.equal(again.queued, 1);
  });
});
