import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { Command } from 'commander';
import { addCrawlOptions, buildCrawlConfig } from '../../../src/cli/crawl-options.js';
import type { CrawlConfig } from '../../../src/config/crawl-config.js';
import { givenSettings, settingNamed, type SettingValue } from '../../../src/config/crawl-settings.js';
import { LiveSettings } from '../../../src/config/live-settings.js';
import {
  readSettings,
  settingsPath,
  settleSettings,
  writeSettings,
  type Settled,
  type SettingsRecord,
} from '../../../src/config/settings-file.js';
import { FatalError } from '../../../src/errors.js';
import { tempDir } from '../../support/cli.js';

/** A node's configuration and the settings it was given, from a command line as `crawl` parses it. */
function node(data: string, ...args: string[]): { config: CrawlConfig; given: Set<string> } {
  const cmd = addCrawlOptions(new Command().exitOverride());
  cmd.parse(['--data', data, ...args], { from: 'user' });
  const isGiven = (name: string): boolean => cmd.getOptionValueSource(name) === 'cli';
  return { config: buildCrawlConfig([], cmd.opts(), {}, isGiven), given: givenSettings(isGiven) };
}

const NO_HOOKS = { hookFiles: [] };

describe('the crawl settings file', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => dir.cleanup());

  test('the first node writes its settings; a later node adopts those it was not given', async () => {
    const first = node(dir.path, '--delay', '250', '--include', 'a+', '--node-id', 'n1', '--max-pages-per-host', '7');
    const wrote = await settleSettings(first.config, NO_HOOKS, first.given);
    assert.equal(wrote.wrote, true);
    assert.equal(wrote.record.revision, 1);
    const onDisk = JSON.parse(await readFile(settingsPath(dir.path), 'utf8'));
    assert.equal(onDisk.settings.delay, 250);
    assert.deepEqual(onDisk.settings.include, ['a+']);
    assert.equal(onDisk.settings['max-pages-per-host'], 7);

    const later = node(dir.path, '--node-id', 'n2', '--concurrency', '3');
    const adopted = await settleSettings(later.config, NO_HOOKS, later.given);
    assert.equal(adopted.wrote, false);
    assert.equal(adopted.config.delayMs, 250);
    assert.deepEqual(
      adopted.config.include.map((r) => r.source),
      ['a+'],
    );
    assert.equal(adopted.config.maxPagesPerHost, 7);
    // Per-node options stay the node's own.
    assert.equal(adopted.config.concurrency, 3);
    assert.equal(adopted.config.nodeId, 'n2');
  });

  test('a node given a value that differs refuses with one line naming the option, both values, exit 2', async () => {
    const first = node(dir.path, '--delay', '1000');
    await settleSettings(first.config, NO_HOOKS, first.given);
    const other = node(dir.path, '--delay', '0', '--scope', 'domain');
    let asked = 0;
    const running = async (): Promise<string[]> => {
      asked++;
      return ['n1'];
    };
    await assert.rejects(settleSettings(other.config, NO_HOOKS, other.given, running), (err: unknown) => {
      assert.ok(err instanceof FatalError);
      assert.equal(err.code, 'SETTINGS_CONFLICT');
      assert.equal(err.exitCode, 2);
      assert.match(err.message, /^--scope domain conflicts with this crawl's --scope host \(and 1 more\) and 1 node of the crawl runs: /);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    // The same value given again is no conflict.
    const same = node(dir.path, '--delay', '1000');
    assert.equal((await settleSettings(same.config, NO_HOOKS, same.given, running)).config.delayMs, 1000);
    assert.equal(asked, 1, 'the running nodes are asked about only on a conflict');
  });

  test('a new run (no other node alive) writes the values it was given as the next revision', async () => {
    const first = node(dir.path, '--delay', '1000', '--max-pages', '5');
    await settleSettings(first.config, NO_HOOKS, first.given);
    const rerun = node(dir.path, '--max-pages', 'unlimited', '--node-id', 'n9');
    const settled = await settleSettings(rerun.config, NO_HOOKS, rerun.given, async () => []);
    assert.equal(settled.wrote, true);
    assert.equal(settled.record.revision, 2);
    assert.deepEqual(settled.changed, ['--max-pages 5 -> unlimited']);
    assert.equal(settled.config.maxPages, Infinity);
    assert.equal(settled.config.delayMs, 1000, 'what it was not given is adopted');
    const onDisk = (await readSettings(dir.path))!;
    assert.equal(onDisk.revision, 2);
    assert.equal(onDisk.settings['max-pages'], 'unlimited');
    assert.equal(onDisk.writtenBy, 'n9');
  });

  test('a revision claimed by a node that wrote nothing (stopped at start) is passed over', async () => {
    const first = node(dir.path, '--delay', '1000');
    await settleSettings(first.config, NO_HOOKS, first.given);
    await writeFile(`${settingsPath(dir.path)}.2`, 'gone');
    const rerun = node(dir.path, '--delay', '5');
    const settled = await settleSettings(rerun.config, NO_HOOKS, rerun.given, async () => []);
    assert.equal(settled.record.revision, 3);
    assert.equal((await readSettings(dir.path))!.settings.delay, 5);
  });

  test('a node of a new run that finds a peer already running adopts the revision that peer wrote meanwhile', async () => {
    const first = node(dir.path, '--delay', '1000');
    await settleSettings(first.config, NO_HOOKS, first.given);
    // Both started with --delay 0; x read revision 1, then y wrote revision 2 and began to beat.
    const y = node(dir.path, '--delay', '0', '--node-id', 'y');
    const x = node(dir.path, '--delay', '0', '--node-id', 'x');
    const yRunning = async (): Promise<string[]> => {
      await settleSettings(y.config, NO_HOOKS, y.given, async () => []);
      return ['y'];
    };
    const settled = await settleSettings(x.config, NO_HOOKS, x.given, yRunning);
    assert.equal(settled.wrote, false);
    assert.equal(settled.record.revision, 2);
    assert.equal(settled.config.delayMs, 0);
  });

  test('two new runs at the same moment with different values: one writes the revision, the other refuses', async () => {
    const first = node(dir.path, '--delay', '1000');
    await settleSettings(first.config, NO_HOOKS, first.given);
    const nodes = [node(dir.path, '--delay', '10', '--node-id', 'x'), node(dir.path, '--delay', '20', '--node-id', 'y')];
    const results = await Promise.allSettled(nodes.map((n) => settleSettings(n.config, NO_HOOKS, n.given, async () => [])));
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1, JSON.stringify(results));
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.match((lost.reason as Error).message, /and a node started it at the same moment/);
    const record = (await readSettings(dir.path))!;
    assert.equal(record.revision, 2);
    assert.equal(record.settings.delay, (won[0] as PromiseFulfilledResult<{ config: CrawlConfig }>).value.config.delayMs);
  });

  test('a --hook file must be the same on every node, given or not', async () => {
    const hook = join(dir.path, 'hook.mjs');
    await writeFile(hook, 'export function filter() { return true; }\n');
    const first = node(dir.path);
    await settleSettings(first.config, { hookFiles: [hook] }, first.given);
    const without = node(dir.path);
    const running = async (): Promise<string[]> => ['n1'];
    await assert.rejects(
      settleSettings(without.config, NO_HOOKS, without.given, running),
      /--hook \(none\) conflicts with this crawl's --hook "sha256:/,
    );
    await writeFile(hook, 'export function filter() { return false; }\n');
    await assert.rejects(
      settleSettings(without.config, { hookFiles: [hook] }, without.given, running),
      /--hook "sha256:[0-9a-f]+" conflicts/,
    );
  });

  test('nodes starting at the same moment: exactly one writes, every one ends with its settings', async () => {
    const nodes = Array.from({ length: 8 }, (_, i) => node(dir.path, '--delay', String(100 + i), '--node-id', `n${i}`));
    // Each was given its own --delay: all but the writer refuse, and the writer's is on disk.
    // A node that settled runs (it beats within the beat and a half that othersAlive watches):
    // one that reads the file only after the writer made it sees the writer alive.
    const running: string[] = [];
    const settle = async (n: (typeof nodes)[number]): Promise<Settled> => {
      const settled = await settleSettings(n.config, NO_HOOKS, n.given, async () => [...running]);
      running.push(n.config.nodeId);
      return settled;
    };
    const results = await Promise.allSettled(nodes.map(settle));
    const wrote = results.filter((r) => r.status === 'fulfilled' && r.value.wrote);
    assert.equal(wrote.length, 1);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as FatalError).code, 'SETTINGS_CONFLICT');
    const record = (await readSettings(dir.path))!;
    const winner = (wrote[0] as PromiseFulfilledResult<{ config: CrawlConfig }>).value.config;
    assert.equal(record.settings.delay, winner.delayMs);
    assert.equal(record.writtenBy, winner.nodeId);
  });

  test('a crawl with no settings file yet (an older data directory) gets one from the first node that starts', async () => {
    assert.equal(await readSettings(dir.path), undefined);
    const n = node(dir.path, '--per-host', '3');
    assert.equal((await settleSettings(n.config, NO_HOOKS, n.given)).wrote, true);
    assert.equal((await readSettings(dir.path))!.settings['per-host'], 3);
  });

  test('a running node applies delay, per-host (up to its start value) and max-pages of a newer revision, and says the rest wait', async () => {
    const n = node(dir.path, '--delay', '1000', '--per-host', '2');
    const settled = await settleSettings(n.config, NO_HOOKS, n.given);
    const live = new LiveSettings(settled.config, settled.record);
    const next = (changes: Record<string, SettingValue>, revision: number): SettingsRecord => ({
      ...settled.record,
      revision,
      settings: { ...settled.record.settings, ...changes },
    });
    const lines = live.apply(next({ delay: 50, 'per-host': 4, 'max-pages': 9, include: ['x'] }, 2));
    assert.equal(live.config.delayMs, 50);
    assert.equal(live.config.perHost, 2);
    assert.equal(live.config.maxPages, 9);
    assert.deepEqual(live.config.include, []);
    assert.deepEqual(lines, [
      '--include (none) -> "x": applies when this node starts again',
      '--max-pages unlimited -> 9: applied',
      '--delay 1000 -> 50: applied',
      '--per-host 2 -> 4: applied as 2 until this node starts again (its connections per host)',
    ]);
    // An older or the same revision changes nothing.
    assert.deepEqual(live.apply(next({ delay: 7 }, 2)), []);
    assert.equal(live.config.delayMs, 50);
    assert.deepEqual(live.apply(next({ delay: 50, 'per-host': 1, 'max-pages': 9, include: ['x'] }, 3)), ['--per-host 4 -> 1: applied']);
    assert.equal(live.config.perHost, 1);
  });

  test('config set values parse as their options do', async () => {
    assert.equal(settingNamed('--delay')!.parse!(['300']), 300);
    assert.equal(settingNamed('max-pages')!.parse!(['unlimited']), 'unlimited');
    assert.deepEqual(settingNamed('exclude')!.parse!(['\\.pdf$', 'logout']), ['\\.pdf$', 'logout']);
    assert.throws(() => settingNamed('delay')!.parse!(['-1']), /--delay must be a whole number/);
    assert.throws(() => settingNamed('delay')!.parse!(['1', '2']), /takes one value/);
    assert.equal(settingNamed('partition')!.parse, undefined);
    // A written revision is read back whole.
    const n = node(dir.path);
    const { record } = await settleSettings(n.config, NO_HOOKS, n.given);
    await writeSettings(dir.path, { ...record, revision: 2, settings: { ...record.settings, delay: 5 } }, 'cli');
    assert.equal((await readSettings(dir.path))!.revision, 2);
  });
});
