import assert from 'node:assert/strict';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { HANDOFF_VERSION, asHandoff, handoffName } from '../../../src/cluster/handoff-file.js';
import { HandoffInbox, type InboxSink } from '../../../src/cluster/handoff-inbox.js';
import { HandoffExchange } from '../../../src/cluster/handoff-exchange.js';
import { HandoffOutbox } from '../../../src/cluster/handoff-outbox.js';
import { Ownership } from '../../../src/cluster/ownership.js';
import type { ScopeFilter } from '../../../src/frontier/scope.js';
import { CrawlStats } from '../../../src/progress/stats.js';
import { Layout } from '../../../src/store/layout.js';
import { tempName } from '../../../src/store/temp-names.js';
import { Mount } from '../../../src/store/mount.js';
import type { MountFs } from '../../../src/store/mount-fs.js';
import { nodeMountFs } from '../../../src/store/node-mount-fs.js';
import { tempDir } from '../../support/cli.js';
import { FakeClock } from '../../support/fake-clock.js';

const A = '127.0.0.2_8001';
const B = '127.0.0.3_8002';
const url = (hostDir: string, path: string): string => `http://${hostDir.replace('_', ':')}${path}`;

/**
 * The real file system behind a client cache of listings, as NFS's or sshfs's: a directory's
 * listing is served from the cache until this client changes something in that directory.
 */
function cachingFs(): MountFs {
  const listings = new Map<string, string[]>();
  const changed = (path: string): void => void listings.delete(dirname(path));
  return {
    ...nodeMountFs,
    readdir: async (path) => {
      const cached = listings.get(path) ?? (await nodeMountFs.readdir(path));
      listings.set(path, cached);
      return [...cached];
    },
    writeNew: (path, data, options) => nodeMountFs.writeNew(path, data, options).finally(() => changed(path)),
    unlink: (path) => nodeMountFs.unlink(path).finally(() => changed(path)),
    rename: (from, to) => nodeMountFs.rename(from, to).finally(() => (changed(from), changed(to))),
  };
}

/** A sink that records what reaches it; `owned` hosts are this node's, `full` makes offers fail. */
function recordingSink(owned: readonly string[], options: { full?: boolean } = {}) {
  const offered: string[] = [];
  const forwarded: string[] = [];
  const queued = new Set<string>();
  const sink: InboxSink & { full: boolean } = {
    full: options.full ?? false,
    inScope: () => true,
    owns: (h) => owned.includes(h),
    offer(u) {
      if (sink.full) return 'full';
      offered.push(u);
      if (queued.has(u)) return 'known';
      queued.add(u);
      return 'queued';
    },
    forward: (u) => void forwarded.push(u),
  };
  return { sink, offered, forwarded, queued };
}

describe('hand-offs (docs/protocol.md, "Hand-offs")', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let layout: Layout;
  const clock = new FakeClock();
  const outbox = (writer: string, owners: Record<string, string>): HandoffOutbox =>
    new HandoffOutbox({ layout, nodeId: writer, fsync: false, clock, owners: { hostOwner: (h) => owners[h] ?? writer } });
  const inboxFiles = async (node: string): Promise<string[]> => (await readdir(layout.inbox(node)).catch(() => [])).sort();

  beforeEach(async () => {
    dir = await tempDir('mountcrawl-handoff-');
    layout = new Layout(dir.path);
    await mkdir(layout.dir('handoff'));
  });
  afterEach(() => dir.cleanup());

  test('a batch goes to its owner as one whole file, links grouped by host, each URL once', async () => {
    const out = outbox('w', { [A]: 'o', [B]: 'o' });
    out.add(url(A, '/1'), A, 1);
    out.add(url(A, '/1'), A, 1);
    out.add(url(B, '/2'), B, 2);
    assert.equal(out.pending, 2);
    assert.equal(await out.flush(), 1);
    assert.equal(out.pending, 0);
    const files = await inboxFiles('o');
    assert.equal(files.length, 1);
    assert.match(files[0]!, /^w\+/);
    const { sink, offered } = recordingSink([A, B]);
    const s = await new HandoffInbox(layout, 'o').read(sink);
    assert.deepEqual(offered.sort(), [url(A, '/1'), url(B, '/2')]);
    assert.equal(s.queued, 2);
    assert.deepEqual(await inboxFiles('o'), [], 'read and removed');
  });

  test("an idle node's look at its inbox: a published hand-off counts, a write in progress does not; the owners waited for", async () => {
    const inbox = new HandoffInbox(layout, 'o');
    assert.equal(await inbox.hasFiles(), false, 'no inbox yet');
    const out = outbox('w', { [A]: 'o', [B]: 'p' });
    out.add(url(A, '/1'), A, 1);
    out.add(url(B, '/1'), B, 1);
    assert.deepEqual([...out.owners()].sort(), ['o', 'p']);
    await mkdir(layout.inbox('o'));
    await writeFile(join(layout.inbox('o'), '.w+x0.json~w~1.tmp'), '{}');
    assert.equal(await inbox.hasFiles(), false, 'a temporary file is no hand-off');
    await out.flush();
    assert.deepEqual([...out.owners()], []);
    assert.equal(await inbox.hasFiles(), true);
  });

  test('an offer answered later (the --hook priority) is waited for: queued counts, and a full one keeps its file', async () => {
    const out = outbox('w', { [A]: 'o' });
    out.add(url(A, '/1'), A, 1);
    await out.flush();
    const { sink, offered } = recordingSink([A], { full: true });
    const later: InboxSink = { ...sink, offer: (u, h, d) => Promise.resolve().then(() => sink.offer(u, h, d)) };
    const kept = await new HandoffInbox(layout, 'o').read(later);
    assert.equal(kept.kept, 1);
    assert.equal((await inboxFiles('o')).length, 1, 'the file stays while the frontier is full');
    sink.full = false;
    const s = await new HandoffInbox(layout, 'o').read(later);
    assert.equal(s.queued, 1);
    assert.deepEqual(offered, [url(A, '/1')]);
    assert.deepEqual(await inboxFiles('o'), []);
  });

  test('a fresh read (a reseed that may end the crawl) lists the inboxes from the server, not from a listing cached before the last hand-off', async () => {
    const reader = new Layout(dir.path, new Mount(cachingFs(), clock));
    const inbox = new HandoffInbox(reader, 'o');
    await mkdir(layout.inbox('o'));
    await mkdir(layout.inbox('gone'));
    const r = recordingSink([A]);
    const live = new Set(['o', 'w']);
    // Both listings cached empty; then a peer writes to this node and to a node that left.
    assert.equal((await inbox.readOrphans(live, r.sink, { sweepTemps: false })).files + (await inbox.read(r.sink)).files, 0);
    const out = outbox('w', { [A]: 'o' });
    out.add(url(A, '/1'), A, 1);
    await out.flush();
    const late = outbox('w', { [A]: 'gone' });
    late.add(url(A, '/2'), A, 1);
    await late.flush();
    assert.equal((await inbox.read(r.sink)).files, 0, 'a cached listing hides the file');
    assert.equal((await inbox.readOrphans(live, r.sink, { sweepTemps: false })).files, 0, 'and the file of a node that left');
    assert.equal((await inbox.readOrphans(live, r.sink, { sweepTemps: false, fresh: true })).files, 1);
    assert.equal((await inbox.read(r.sink, { fresh: true })).files, 1);
    assert.deepEqual(r.offered.sort(), [url(A, '/1'), url(A, '/2')]);
    assert.deepEqual(await inboxFiles('o'), [], 'read and removed; no probe left');
    assert.deepEqual(
      (await readdir(layout.dir('handoff'))).sort(),
      ['o'],
      'the emptied inbox of the node that left is gone; no probe left',
    );
  });

  test('a batch is due once its oldest link has waited the given time, and not after it was written', async () => {
    const out = outbox('w', { [A]: 'o' });
    assert.equal(out.due(1000), false, 'nothing waits');
    out.add(url(A, '/1'), A, 1);
    clock.advance(999);
    out.add(url(A, '/2'), A, 1);
    assert.equal(out.due(1000), false);
    clock.advance(1);
    assert.equal(out.due(1000), true);
    await out.flush();
    assert.equal(out.due(1000), false);
  });

  test('links of hosts this node owns by its own view are not handed off', async () => {
    const out = outbox('w', { [A]: 'w' });
    out.add(url(A, '/1'), A, 1);
    assert.equal(out.pending, 0);
  });

  test('writer dies after writing: its hand-off is applied all the same (nothing depends on the writer being alive)', async () => {
    const ghost = outbox('ghost', { [A]: 'o' });
    ghost.add(url(A, '/x'), A, 1);
    await ghost.flush();
    const { sink, offered } = recordingSink([A]);
    await new HandoffInbox(layout, 'o').read(sink);
    assert.deepEqual(offered, [url(A, '/x')]);
  });

  // docs/protocol.md, errs records: a link handed off keeps the page it was found on, forwarded too.
  test('a link goes with the URL of the page it was found on; its reader offers it with that referrer, a level up', async () => {
    const w = outbox('w', { [A]: 'old', [B]: 'old' });
    w.add(url(A, '/a'), A, 3, url(B, '/page'));
    w.add(url(B, '/b'), B, 1);
    await w.flush();
    const forwardTo = outbox('old', { [A]: 'new', [B]: 'old' });
    const seen = new Map<string, unknown>();
    const { sink } = recordingSink([B]);
    const plain = sink.offer;
    sink.offer = (u, h, d, r) => {
      seen.set(u, r);
      return plain(u, h, d, r);
    };
    sink.forward = (u, h, d, r) => forwardTo.forward(u, h, d, r);
    await new HandoffInbox(layout, 'old').read(sink);
    assert.equal(seen.get(url(B, '/b')), undefined, 'none known: none given');
    await forwardTo.flush();
    const got = recordingSink([A]);
    const refs: unknown[] = [];
    got.sink.offer = (u, _h, _d, r) => {
      refs.push([u, r]);
      return 'queued';
    };
    await new HandoffInbox(layout, 'new').read(got.sink);
    assert.deepEqual(refs, [[url(A, '/a'), { url: url(B, '/page'), depth: 2 }]], 'forwarded with its referrer');
  });

  test('ownership moved while unread: links of hosts the reader no longer owns are sent on, not dropped', async () => {
    const w = outbox('w', { [A]: 'old', [B]: 'old' });
    w.add(url(A, '/a'), A, 1);
    w.add(url(B, '/b'), B, 1);
    await w.flush();
    // "old" now owns only A; B moved to "new".
    const forwardTo = outbox('old', { [A]: 'old', [B]: 'new' });
    const { sink, offered } = recordingSink([A]);
    sink.forward = (u, h, d) => forwardTo.add(u, h, d);
    const s = await new HandoffInbox(layout, 'old').read(sink);
    assert.deepEqual(offered, [url(A, '/a')]);
    assert.equal(s.forwarded, 1);
    await forwardTo.flush();
    const got = recordingSink([B]);
    await new HandoffInbox(layout, 'new').read(got.sink);
    assert.deepEqual(got.offered, [url(B, '/b')], 'the new owner got the link');
  });

  test('a lend (docs/protocol.md, "Lending hosts"): the file names the lent host, and its reader counts the lend before it sorts the links', async () => {
    const owners: Record<string, string> = { [A]: 'lender' };
    const w = outbox('lender', owners);
    owners[A] = 'borrower'; // the lender's view once it lent A
    w.lend('borrower', A, 12);
    w.add(url(A, '/q'), A, 3);
    assert.equal(await w.flush(), 1);
    const lends: [string, number, readonly string[]][] = [];
    const owned: string[] = [];
    const { sink, offered, forwarded } = recordingSink(owned);
    sink.lent = (lender, counter, hosts) => {
      lends.push([lender, counter, hosts]);
      owned.push(...hosts);
    };
    await new HandoffInbox(layout, 'borrower').read(sink);
    assert.deepEqual(lends, [['lender', 12, [A]]]);
    assert.deepEqual(offered, [url(A, '/q')], 'queued, not sent back');
    assert.deepEqual(forwarded, []);
  });

  test('a lend in an inbox of a node that left is not taken by the node that drains it', async () => {
    const w = outbox('lender', { [A]: 'gone' });
    w.lend('gone', A, 3);
    w.add(url(A, '/q'), A, 1);
    await w.flush();
    const lends: string[] = [];
    const { sink, forwarded } = recordingSink([]);
    sink.lent = (_l, _c, hosts) => void lends.push(...hosts);
    await new HandoffInbox(layout, 'reader').readOrphans(new Set(['reader', 'lender']), sink, { sweepTemps: false });
    assert.deepEqual(lends, []);
    assert.deepEqual(forwarded, [url(A, '/q')], "sent on to the owner by the reader's view");
  });

  test('asHandoff keeps a well-formed lend and drops a malformed one or unsafe host names', () => {
    const base = { v: HANDOFF_VERSION, from: 'w', to: 'o', at: 0, links: {} };
    assert.deepEqual(asHandoff({ ...base, lent: { counter: 4, hosts: [A, '../etc', 7] } }).lent, { counter: 4, hosts: [A] });
    assert.equal(asHandoff({ ...base, lent: { counter: 'x', hosts: [A] } }).lent, undefined);
    assert.equal(asHandoff({ ...base, lent: { counter: 1, hosts: ['../x'] } }).lent, undefined);
  });

  test('views that disagree for a moment: a link sent out and sent back is sent again, not dropped as sent recently', async () => {
    // w found the link and sent it to "other" (its view); "other" thinks w owns the host and sends it back.
    const wViews: Record<string, string> = { [A]: 'other' };
    const w = outbox('w', wViews);
    w.add(url(A, '/x'), A, 1);
    await w.flush();
    const back = outbox('other', { [A]: 'w' });
    const atOther = recordingSink([]);
    atOther.sink.forward = (u, h, d) => back.forward(u, h, d);
    await new HandoffInbox(layout, 'other').read(atOther.sink);
    await back.flush();
    // w still thinks "other" owns it: it sends it on again, and once the views agree it lands.
    const atW = recordingSink([]);
    atW.sink.forward = (u, h, d) => w.forward(u, h, d);
    await new HandoffInbox(layout, 'w').read(atW.sink);
    assert.equal(w.pending, 1, 'sent on again');
    await w.flush();
    const got = recordingSink([A]);
    await new HandoffInbox(layout, 'other').read(got.sink);
    assert.deepEqual(got.offered, [url(A, '/x')]);
  });

  test('ownership moved: after a node leaves, its unread inbox is drained by the others, then removed', async () => {
    const w = outbox('w', { [A]: 'dead' });
    w.add(url(A, '/a'), A, 1);
    await w.flush();
    const { sink, offered } = recordingSink([A]);
    await new HandoffInbox(layout, 'o').readOrphans(new Set(['o', 'w']), sink, { sweepTemps: true });
    assert.deepEqual(offered, [url(A, '/a')]);
    await assert.rejects(readdir(layout.inbox('dead')), { code: 'ENOENT' });
    // A writer that still thinks "dead" is alive makes the inbox again after that full reseed:
    // the next reseed of any node, full or not, reads it again.
    const late = outbox('w2', { [A]: 'dead' });
    late.add(url(A, '/b'), A, 1);
    await late.flush();
    assert.equal((await inboxFiles('dead')).length, 1);
    // A temporary file of a writer this node does not know yet is left to the age sweep.
    const temp = tempName(handoffName('w3', 'abc123', 0), 'w3', 'abc123', 0);
    await writeFile(join(layout.inbox('dead'), temp), '{');
    await new HandoffInbox(layout, 'o').readOrphans(new Set(['o', 'w']), sink, { sweepTemps: false });
    assert.deepEqual(offered, [url(A, '/a'), url(A, '/b')]);
    assert.deepEqual(await inboxFiles('dead'), [temp]);
  });

  test('links sent on from a file are written to their owner before the file is removed (read from an orphaned inbox)', async () => {
    // A file in the inbox of a node that ended done, with a link of a host another live node owns.
    const w = outbox('w', { [A]: 'done' });
    w.add(url(A, '/a'), A, 1);
    await w.flush();
    const [source] = await inboxFiles('done');
    const on = outbox('r', { [A]: 'owner' });
    let sourceAtSend: boolean | undefined;
    const sink: InboxSink = {
      ...recordingSink([]).sink,
      forward: (u, h, d) => on.forward(u, h, d),
      sent: async () => {
        sourceAtSend = (await inboxFiles('done')).includes(source!);
        return on.flush();
      },
    };
    const s = await new HandoffInbox(layout, 'r').readOrphans(new Set(['r', 'owner', 'w']), sink, { sweepTemps: false });
    assert.equal(s.forwarded, 1);
    assert.equal(sourceAtSend, true, 'written while the file it came from was still there');
    assert.equal(on.pending, 0);
    assert.equal((await inboxFiles('owner')).length, 1, "in the owner's inbox when the reader's read ends");
    assert.deepEqual(await inboxFiles('done'), []);
  });

  test('the exchange reads the inboxes of nodes not alive before its own', async () => {
    const ownership = new Ownership('r', 'host');
    const exchange = new HandoffExchange({
      layout,
      nodeId: 'r',
      fsync: false,
      clock,
      ownership,
      scope: { hostInScope: () => true } as unknown as ScopeFilter,
      stats: new CrawlStats(() => clock.monotonic()),
    });
    const toOwn = outbox('w', { [A]: 'r' });
    toOwn.add(url(A, '/own'), A, 1);
    await toOwn.flush();
    const toDone = outbox('w', { [A]: 'done' });
    toDone.add(url(A, '/orphan'), A, 1);
    await toDone.flush();
    const offered: string[] = [];
    const r = await exchange.receive({ offer: (u) => (offered.push(u), 'queued'), hosts: new Map() }, { live: ['r'] });
    assert.equal(r.queued, 2);
    assert.deepEqual(offered, [url(A, '/orphan'), url(A, '/own')]);
  });

  test('a host that went out while its --hook priority was asked takes nothing: the file stays', async () => {
    const exchange = new HandoffExchange({
      layout,
      nodeId: 'r',
      fsync: false,
      clock,
      ownership: new Ownership('r', 'host'),
      scope: { hostInScope: () => true } as unknown as ScopeFilter,
      stats: new CrawlStats(() => clock.monotonic()),
    });
    const out = outbox('w', { [A]: 'r' });
    out.add(url(A, '/1'), A, 1);
    await out.flush();
    const hosts = new Map<string, { phase: string }>([[A, { phase: 'ready' }]]);
    // As Admission.offerRanked with a priority hook: the host is let go before the answer, and the offer is refused.
    const offer = () =>
      Promise.resolve().then(() => {
        hosts.set(A, { phase: 'releasing' });
        return 'known' as const;
      });
    const r = await exchange.receive({ offer, hosts });
    assert.equal(r.queued, 0);
    assert.equal(r.kept, 1);
    assert.equal((await inboxFiles('r')).length, 1, 'read again once the views agree');
  });

  test('removeOwn: a node leaving removes its inbox when empty, keeps it with a file in it; a later writer makes it again', async () => {
    const w = outbox('w', { [A]: 'o' });
    w.add(url(A, '/1'), A, 1);
    await w.flush();
    await new HandoffInbox(layout, 'o').removeOwn();
    assert.equal((await inboxFiles('o')).length, 1, 'a file in it: kept');
    await new HandoffInbox(layout, 'o').read(recordingSink([A]).sink);
    await new HandoffInbox(layout, 'o').removeOwn();
    await assert.rejects(readdir(layout.inbox('o')), { code: 'ENOENT' });
    w.add(url(A, '/2'), A, 1);
    assert.equal(await w.flush(), 1, 'the writer, which made the directory before, makes it again');
    assert.equal((await inboxFiles('o')).length, 1);
  });

  test('two writers for one host at once: two files (no rename replaces another), the URL queued once', async () => {
    const w1 = outbox('w1', { [A]: 'o' });
    const w2 = outbox('w2', { [A]: 'o' });
    w1.add(url(A, '/same'), A, 1);
    w2.add(url(A, '/same'), A, 1);
    await Promise.all([w1.flush(), w2.flush()]);
    assert.equal((await inboxFiles('o')).length, 2);
    assert.notEqual(handoffName('w1', 'abc123', 0), handoffName('w2', 'abc123', 0));
    const { sink, queued } = recordingSink([A]);
    const s = await new HandoffInbox(layout, 'o').read(sink);
    assert.equal(s.files, 2);
    assert.equal(s.queued, 1);
    assert.deepEqual([...queued], [url(A, '/same')]);
    assert.deepEqual(await inboxFiles('o'), []);
  });

  test('clocks disagree: a hand-off stamped far in the past or the future is applied alike', async () => {
    await mkdir(layout.inbox('o'));
    for (const [i, at] of [0, 8.64e15].entries()) {
      const file = { v: HANDOFF_VERSION, from: 'w', to: 'o', at, links: { [A]: [[url(A, `/${i}`), 1]] } };
      await writeFile(join(layout.inbox('o'), handoffName('w', 'abc123', i)), JSON.stringify(file));
    }
    const { sink, offered } = recordingSink([A]);
    await new HandoffInbox(layout, 'o').read(sink);
    assert.deepEqual(offered.sort(), [url(A, '/0'), url(A, '/1')]);
  });

  test('frontier full: the file stays and is read again until its links fit', async () => {
    const w = outbox('w', { [A]: 'o' });
    w.add(url(A, '/1'), A, 1);
    await w.flush();
    const r = recordingSink([A], { full: true });
    const inbox = new HandoffInbox(layout, 'o');
    assert.equal((await inbox.read(r.sink)).kept, 1);
    assert.equal((await inboxFiles('o')).length, 1, 'kept');
    r.sink.full = false;
    assert.equal((await inbox.read(r.sink)).queued, 1);
    assert.deepEqual(await inboxFiles('o'), []);
  });

  test('a write in progress (temporary file) is never read; a foreign or hostile file gives nothing unsafe', async () => {
    await mkdir(layout.inbox('o'));
    await writeFile(join(layout.inbox('o'), `.${handoffName('w', 'abc123', 0)}~w~abc.tmp`), '{"v":1,"links":{');
    const hostile = {
      v: HANDOFF_VERSION,
      links: {
        '../../etc': [['http://x/', 1]],
        [A]: [
          [url(B, '/not-A'), 1],
          [url(A, '/ok'), 1],
        ],
      },
    };
    await writeFile(join(layout.inbox('o'), handoffName('w', 'abc123', 1)), JSON.stringify(hostile));
    const { sink, offered } = recordingSink([A, B]);
    await new HandoffInbox(layout, 'o').read(sink);
    assert.deepEqual(offered, [url(A, '/ok')]);
    assert.equal((await inboxFiles('o')).filter((f) => f.endsWith('.tmp')).length, 1, "the writer's temporary file is left to it");
    assert.throws(() => asHandoff({ v: 99, links: {} }), TypeError);
  });

  test('temporary files of writers that are gone are removed with a full reseed, those of live writers are left', async () => {
    await mkdir(layout.inbox('o'));
    const dead = `.${handoffName('dead', 'abc123', 0)}~dead~abc.tmp`;
    const alive = `.${handoffName('w', 'abc123', 0)}~w~abd.tmp`;
    for (const name of [dead, alive]) await writeFile(join(layout.inbox('o'), name), '{');
    const { sink } = recordingSink([A]);
    await new HandoffInbox(layout, 'o').read(sink);
    assert.equal((await inboxFiles('o')).length, 2, 'an ordinary read removes nothing');
    await new HandoffInbox(layout, 'o').read(sink, { sweepTempsOf: new Set(['o', 'w']) });
    assert.deepEqual(await inboxFiles('o'), [alive]);
  });

  test('waiting: true while a batch, even one that only names a lend, is unwritten or being written', async () => {
    const w = outbox('w', { [A]: 'o' });
    assert.equal(w.waiting, false);
    w.lend('o', A, 3);
    assert.equal(w.pending, 0, 'a lend alone holds no link');
    assert.equal(w.waiting, true, 'but its file is still to be written');
    w.add(url(A, '/1'), A, 1);
    const flushing = w.flush();
    assert.equal(w.waiting, true, 'being written: a node that decided now would end before the file is on the mount');
    // A second flush waits for the first and writes nothing more: the files the first wrote
    // count for whoever looks at `written`, not at the second call's answer.
    const before = w.written;
    assert.equal(await w.flush(), 0);
    assert.equal(await flushing, 1);
    assert.equal(w.written - before, 1);
    assert.equal(w.waiting, false);
  });

  test('a failed write keeps the batch: the next flush writes it', async () => {
    await writeFile(layout.inbox('o'), 'not a directory');
    const w = outbox('w', { [A]: 'o' });
    w.add(url(A, '/1'), A, 1);
    await assert.rejects(w.flush());
    assert.equal(w.pending, 1);
    await rm(layout.inbox('o'));
    await mkdir(layout.inbox('o'));
    assert.equal(await w.flush(), 1);
    assert.equal((await inboxFiles('o')).length, 1);
  });
});
