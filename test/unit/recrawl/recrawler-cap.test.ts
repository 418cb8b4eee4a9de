import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ALLOW_ALL } from '../../../src/fetch/robots.js';
import { Frontier } from '../../../src/frontier/frontier.js';
import type { Logger } from '../../../src/progress/logger.js';
import { CrawlStats } from '../../../src/progress/stats.js';
import { Recrawler } from '../../../src/recrawl/recrawler.js';
import { writeSchedule, type HostSchedule } from '../../../src/recrawl/schedule-file.js';
import { Layout } from '../../../src/store/layout.js';
import { FakeClock } from '../../support/fake-clock.js';
import { frontierConfig } from '../../support/frontier-rig.js';

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

test('pages due at load obey --frontier-cap: the rest wait and are queued as room frees, each once', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-cap-'));
  try {
    const clock = new FakeClock();
    const layout = new Layout(dir);
    const config = frontierConfig({ frontierCap: 4, recrawl: { afterMs: 1000, adaptive: false, minMs: 250, maxMs: 8000 } });
    const schedule: HostSchedule = new Map();
    for (let i = 0; i < 10; i++) schedule.set(`k${i}`, { url: `http://a.example/${i}`, depth: 1, dueMs: clock.now() - 1000 });
    await writeSchedule(layout, 'a.example', schedule, { nodeId: 'n1', fsync: false, nowMs: clock.now() });
    const stats = new CrawlStats(() => clock.monotonic());
    const frontier = new Frontier({ config, clock, stats, events: { workReady: () => undefined, wake: () => undefined } });
    const recrawler = new Recrawler({ config, policy: config.recrawl!, clock, log: quiet, layout, frontier });
    const { host } = frontier.hostFor('a.example', undefined);
    host.moveTo('loading');
    assert.equal(await recrawler.load(host, new Set(schedule.keys()), new Map()), true);
    assert.equal(frontier.queued, 4, 'more due pages were queued than --frontier-cap allows');
    host.moveTo('ready');
    host.robotsKnown(ALLOW_ALL);
    frontier.schedule(host); // as HostKeeper does once the host is ready
    assert.equal(recrawler.refill(), 0, 'refilled a full frontier');
    const taken: string[] = [];
    const drain = (): void => {
      for (let next = frontier.next(clock.monotonic()); next !== undefined; next = frontier.next(clock.monotonic())) {
        if (next.kind === 'page') taken.push(next.item.key);
      }
    };
    drain();
    assert.equal(recrawler.refill(), 4);
    assert.ok(frontier.queued <= 4);
    drain();
    assert.equal(recrawler.refill(), 2);
    drain();
    assert.equal(recrawler.refill(), 0);
    assert.deepEqual([...taken].sort(), [...schedule.keys()].sort());
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
