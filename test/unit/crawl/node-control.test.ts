import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ControlRecord, writeControl } from '../../../src/cluster/control-file.js';
import { asNodeRecord } from '../../../src/cluster/node-record.js';
import { CrawlNode, type CrawlNodeDeps, type RunResult } from '../../../src/crawl/crawl-node.js';
import { LiveSettings } from '../../../src/config/live-settings.js';
import { type SettingsRecord, settingsPath } from '../../../src/config/settings-file.js';
import { writeFileAtomic } from '../../../src/store/atomic-write.js';
import { ExitCode } from '../../../src/errors.js';
import { silentLogger } from '../../../src/progress/logger.js';
import { Layout } from '../../../src/store/layout.js';
import { Mount } from '../../../src/store/mount.js';
import { FakeClock } from '../../support/fake-clock.js';
import { type Answer, fakeFetcher } from '../../support/fake-fetcher.js';
import { frontierConfig } from '../../support/frontier-rig.js';
import { MemoryFs } from '../../support/memory-fs.js';

const DATA_DIR = '/nonexistent/mountcrawl-control';
const HOSTS = ['a.test', 'b.test', 'c.test', 'd.test', 'e.test', 'f.test'];
const PAGES = 8;
const HEARTBEAT_MS = 1_000;
const STEP_MS = 50;

/** PAGES pages a host in a chain, each linking the next and the next host's first page. */
function site(): { pages: string[]; answers: Record<string, Answer> } {
  const answers: Record<string, Answer> = {};
  HOSTS.forEach((host, i) => {
    const next = HOSTS[(i + 1) % HOSTS.length]!;
    for (let p = 0; p < PAGES; p++) {
      const links = [`/p${(p + 1) % PAGES}`, `http://${next}/p0`];
      answers[`http://${host}/p${p}`] = [200, {}, `<html><body>${links.map((l) => `<a href="${l}">x</a>`).join('')}</body></html>`];
    }
    answers[`http://${host}/robots.txt`] = [404, {}];
  });
  return { pages: Object.keys(answers).filter((u) => !u.endsWith('/robots.txt')), answers };
}

/** Nodes of one process on one MemoryFs and one fake clock (test/unit/crawl/in-memory-mount.test.ts), with a control file to write. */
class Rig {
  readonly clock = new FakeClock();
  readonly fs = new MemoryFs(() => this.clock.now());
  readonly mount = new Mount(this.fs, this.clock);
  readonly layout = new Layout(DATA_DIR, this.mount);
  readonly site = site();
  readonly fake = fakeFetcher(this.site.answers);
  readonly nodes = new Map<string, CrawlNode>();
  readonly results = new Map<string, RunResult>();
  #seq = 0;
  #seed = 7;

  start(id: string, extra: Partial<CrawlNodeDeps> = {}): CrawlNode {
    const node = new CrawlNode(
      frontierConfig({
        dataDir: DATA_DIR,
        nodeId: id,
        seedUrls: HOSTS.map((h) => `http://${h}/p0`),
        heartbeatMs: HEARTBEAT_MS,
        deadAfterMs: 10_000,
        delayMs: 500,
        perHost: 1,
      }),
      { clock: this.clock, logger: silentLogger, fs: this.fs, fetcher: this.fake.fetcher, random: () => this.#random(), ...extra },
    );
    this.nodes.set(id, node);
    void node.run().then((r) => this.results.set(id, r));
    return node;
  }

  #random(): number {
    this.#seed = (this.#seed * 48_271) % 2_147_483_647;
    return this.#seed / 2_147_483_647;
  }

  /** Moves the clock `ms` in steps, a turn of the event loop each (no real I/O: every promise settles). */
  async run(ms: number, until: () => boolean = () => false): Promise<void> {
    for (let t = 0; t < ms && !until(); t += STEP_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      this.clock.advance(STEP_MS);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Writes the control file as `mountcrawl stop | pause | resume | drain` does. */
  async order(
    change: (seq: number, given: { seq: number; at: string; by: string }) => Omit<ControlRecord, 'format' | 'seq'>,
  ): Promise<void> {
    const seq = ++this.#seq;
    await writeControl(this.mount, DATA_DIR, { format: 1, seq, ...change(seq, { seq, at: 'now', by: 'test' }) }, 'test');
  }

  async recordState(id: string): Promise<string | undefined> {
    if (!this.fs.exists(this.layout.node(id))) return undefined;
    return asNodeRecord(JSON.parse((await this.fs.readFile(this.layout.node(id))).toString('utf8'))).state;
  }

  ended(ids: readonly string[]): boolean {
    return ids.every((id) => this.results.has(id));
  }

  fetchedPages(): string[] {
    return this.fake.asked.filter((u) => !u.endsWith('/robots.txt'));
  }
}

describe('stop, pause, resume and drain through the control file (three nodes, one MemoryFs, a fake clock)', { timeout: 120_000 }, () => {
  test('pause: within a heartbeat no node sends a request, each keeps beating and its leases; a node started meanwhile starts paused; resume: the crawl completes', async () => {
    const rig = new Rig();
    rig.start('n1');
    rig.start('n2');
    await rig.run(60_000, () => rig.fetchedPages().length >= 6);
    await rig.order((_, g) => ({ paused: g, drain: [] }));
    await rig.run(HEARTBEAT_MS + 500); // a heartbeat, and what was in flight then
    const asked = rig.fake.asked.length;
    const leases = rig.fs.files((p) => p.startsWith(`${rig.layout.dir('hosts')}/`));
    assert.ok(leases.length > 0, 'hosts are held');
    const beats = rig.nodes.get('n1')!.stats.heartbeats.beats;
    await rig.run(5 * HEARTBEAT_MS);
    assert.equal(rig.fake.asked.length, asked, 'no request while paused');
    assert.ok(rig.nodes.get('n1')!.stats.heartbeats.beats >= beats + 4, 'the heartbeat goes on');
    assert.deepEqual(
      rig.fs.files((p) => p.startsWith(`${rig.layout.dir('hosts')}/`)),
      leases,
      'leases kept',
    );
    // A node that starts now joins (its share of the hosts moves to it) and sends nothing either.
    rig.start('n3');
    await rig.run(5 * HEARTBEAT_MS);
    assert.equal(rig.fake.asked.length, asked, 'no request while paused');
    for (const id of ['n1', 'n2', 'n3']) {
      assert.equal(rig.nodes.get(id)!.stats.state, 'paused', id);
      assert.equal(await rig.recordState(id), 'paused', `${id}'s record`);
    }
    assert.equal(rig.results.size, 0, 'every node is up');

    await rig.order(() => ({ drain: [] }));
    await rig.run(300_000, () => rig.ended(['n1', 'n2', 'n3']));
    for (const id of ['n1', 'n2', 'n3']) assert.deepEqual(rig.results.get(id), { reason: 'complete', exitCode: ExitCode.OK }, id);
    assert.deepEqual([...rig.fetchedPages()].sort(), [...rig.site.pages].sort(), 'every page fetched once');
  });

  test('stop: every node stops as on Ctrl-C and exits 0; a node started after the stop crawls to the end', async () => {
    const rig = new Rig();
    for (const id of ['n1', 'n2', 'n3']) rig.start(id);
    await rig.run(60_000, () => rig.fetchedPages().length >= 10);
    await rig.order((_, g) => ({ stop: g, drain: [] }));
    await rig.run(3 * HEARTBEAT_MS + 5_000, () => rig.ended(['n1', 'n2', 'n3']));
    for (const id of ['n1', 'n2', 'n3']) {
      const r = rig.results.get(id);
      assert.equal(r?.reason, 'stopped', id);
      assert.equal(r?.exitCode, ExitCode.OK, id);
      assert.match(r?.message ?? '', /^stopped by mountcrawl stop \(by test at now\)$/);
      assert.equal(rig.fs.exists(rig.layout.node(id)), false, `${id} left`);
    }
    assert.ok(rig.fetchedPages().length < rig.site.pages.length, 'work was left');
    assert.deepEqual(
      rig.fs.files((p) => p.startsWith(`${rig.layout.dir('hosts')}/`)),
      [],
      'every lease released',
    );

    rig.start('n4');
    await rig.run(300_000, () => rig.ended(['n4']));
    assert.deepEqual(rig.results.get('n4'), { reason: 'complete', exitCode: ExitCode.OK });
    assert.deepEqual(new Set(rig.fetchedPages()), new Set(rig.site.pages), 'the next run resumed to the end');
  });

  test('drain: that node stops and exits 0 (its record says draining meanwhile); the other two take its hosts and complete the crawl', async () => {
    const rig = new Rig();
    for (const id of ['n1', 'n2', 'n3']) rig.start(id);
    await rig.run(60_000, () => rig.fetchedPages().length >= 10);
    const held = rig.nodes.get('n2')!.ownedHosts().length;
    assert.ok(held > 0, 'n2 holds hosts');
    await rig.order((_, g) => ({ drain: [{ ...g, node: 'n2' }] }));
    // Every record n2 writes from now on, as it lands.
    const states: (string | undefined)[] = [];
    const rename = rig.fs.rename.bind(rig.fs);
    rig.fs.rename = async (from, to) => {
      await rename(from, to);
      if (to === rig.layout.node('n2')) states.push(await rig.recordState('n2'));
    };
    await rig.run(3 * HEARTBEAT_MS + 5_000, () => rig.ended(['n2']));
    const r = rig.results.get('n2');
    assert.equal(r?.exitCode, ExitCode.OK);
    assert.match(r?.message ?? '', /^drained \(by test at now\): its hosts went to the other nodes$/);
    assert.ok(states.includes('draining'), `n2's record said draining before it left: ${states.join(', ')}`);
    assert.equal(rig.fs.exists(rig.layout.node('n2')), false, 'n2 left');
    assert.equal(rig.results.has('n1') || rig.results.has('n3'), false, 'the others go on');
    await rig.run(300_000, () => rig.ended(['n1', 'n3']));
    for (const id of ['n1', 'n3']) assert.deepEqual(rig.results.get(id), { reason: 'complete', exitCode: ExitCode.OK }, id);
    assert.deepEqual(new Set(rig.fetchedPages()), new Set(rig.site.pages), 'every page fetched');
  });

  test('config set: a running node reads the settings file through its mount at each heartbeat and applies a new revision', async () => {
    const rig = new Rig();
    const record = (revision: number, delay: number): SettingsRecord => ({
      format: 1,
      revision,
      writtenBy: 'test',
      writtenAt: 'now',
      settings: { delay },
    });
    const write = (r: SettingsRecord): Promise<void> =>
      writeFileAtomic(rig.mount, settingsPath(DATA_DIR), JSON.stringify(r), { nodeId: 'test', fsync: false });
    const lines: string[] = [];
    const logger = { ...silentLogger, info: (line: string) => void lines.push(line) };
    const live = new LiveSettings(frontierConfig({ dataDir: DATA_DIR, nodeId: 'n1', delayMs: 500 }), record(1, 500));
    rig.start('n1', { logger, live });
    await rig.run(3 * HEARTBEAT_MS);
    await write(record(2, 20));
    await rig.run(HEARTBEAT_MS + STEP_MS);
    assert.equal(live.config.delayMs, 20);
    assert.deepEqual(
      lines.filter((l) => l.startsWith('settings')),
      ['settings revision 2: --delay 500 -> 20: applied'],
    );
  });
});
