import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { QueueItem } from '../../../src/frontier/host-queue.js';
import { SpillFile } from '../../../src/frontier/spill-file.js';
import { SpillRoom } from '../../../src/frontier/spill-room.js';
import { urlKey } from '../../../src/url/key.js';
import { freshDirs } from '../../support/temp-paths.js';

const dirs = freshDirs('mountcrawl-spill-test-');

function item(i: number, pad = ''): QueueItem {
  const url = `http://a.example/page/${i}${pad}`;
  return i % 3 === 0
    ? { url, key: urlKey(url), depth: i % 7, priority: 5 - i, referrer: { url: 'http://a.example/', depth: 0 } }
    : { url, key: urlKey(url), depth: i % 7 };
}

/** Takes every item back, one read at a time. */
function takeAll(file: SpillFile): QueueItem[] {
  const out: QueueItem[] = [];
  while (file.length > 0) {
    const got = file.take();
    assert.ok(got.length > 0, 'a take while items wait returns some');
    out.push(...got);
  }
  return out;
}

describe('SpillFile', () => {
  test('items come back in the order appended, fields and all, across many reads and appends between them', async () => {
    const file = new SpillFile(join(await dirs(), 'q.jsonl'));
    const items = Array.from({ length: 5_000 }, (_, i) => item(i));
    for (const it of items.slice(0, 3_000)) file.append(it);
    assert.equal(file.length, 3_000);
    const first = file.take();
    assert.ok(first.length < 3_000, 'one read of 8 KiB, not everything');
    for (const it of items.slice(3_000)) file.append(it);
    assert.deepEqual([...first, ...takeAll(file)], items);
    assert.equal(file.length, 0);
    assert.deepEqual(file.take(), []);
    file.close();
  });

  test('a file taken to its end starts again empty; a line longer than a read comes back whole', async () => {
    const path = join(await dirs(), 'q.jsonl');
    const file = new SpillFile(path);
    for (let i = 0; i < 2_000; i++) file.append(item(i));
    assert.ok(statSync(path).size > 0, 'written once past 8 KiB');
    assert.equal(takeAll(file).length, 2_000);
    assert.equal(statSync(path).size, 0, 'emptied when all was taken');
    const long = item(1, 'x'.repeat(200_000));
    for (const it of [item(7), long, item(8)]) file.append(it);
    for (let i = 0; i < 400; i++) file.append(item(100 + i));
    assert.deepEqual(takeAll(file).slice(0, 3), [item(7), long, item(8)]);
    file.close();
    assert.equal(existsSync(path), false, 'close removes the file');
  });
});

describe('SpillRoom', () => {
  test("one directory per process, removed at close; a dead process's directory is removed by the next one", async () => {
    const root = await dirs();
    // A directory left by a process that ran and ended (its pid no longer runs).
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const leftBehind = join(root, `mountcrawl-spill-${dead.stdout}-abc123`);
    mkdirSync(leftBehind);
    // One of a process that still runs (this one's parent) stays.
    const live = join(root, `mountcrawl-spill-${process.ppid}-def456`);
    mkdirSync(live);
    const room = new SpillRoom(root);
    const a = room.file();
    const b = room.file();
    assert.notEqual(a.path, b.path);
    assert.equal(existsSync(leftBehind), false, "the dead process's directory is gone");
    assert.equal(existsSync(live), true, "a running process's directory stays");
    for (let i = 0; i < 2_000; i++) a.append(item(i));
    assert.equal(room.openFiles, 2);
    b.close();
    assert.equal(room.openFiles, 1);
    room.close();
    assert.deepEqual(readdirSync(root), [`mountcrawl-spill-${process.ppid}-def456`]);
  });
});
