import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../../src/config/clock.js';
import type { Logger } from '../../../src/progress/logger.js';
import { claimNameOf, repairDeadWarcs, type WriterLiveness } from '../../../src/warc/dead-writer-repair.js';
import { WarcCapture } from '../../../src/warc/warc-capture.js';
import { checkWarcDir, parseWarcFile } from '../../support/warc-check.js';
import { FAR, exchange, leftOpen } from '../../support/warc-left-open.js';

/** Heartbeats as a node sees them: `dead` ids are gone; `live` ids run as the given process. */
function liveness(dead: string[], live: Record<string, typeof FAR> = {}): WriterLiveness {
  return {
    isGone: (id) => dead.includes(id),
    recordOf: (id) => live[id],
  };
}

describe('repair of WARC files left open by dead writers of any machine', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mountcrawl-warc-repair-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('a dead node of another machine: its torn tail is cut, the lone response dropped, the index rewritten, the file closed', async () => {
    const name = await leftOpen(dir, 'ws9', 0);
    // Without heartbeats (the first write's local check), a file of another machine is left alone.
    assert.deepEqual(await repairDeadWarcs(dir, 'ws1', undefined), []);
    const done = await repairDeadWarcs(dir, 'ws1', liveness(['ws9']));
    assert.deepEqual(
      done.map((r) => [r.name, r.writer, r.records]),
      [[name, 'ws9', 5]],
    );
    assert.ok(done[0]!.cut > 0);
    assert.deepEqual((await readdir(dir)).sort(), [name.replace(/\.warc\.gz$/, '.cdxj'), name]);
    const set = await checkWarcDir(dir); // no tail, every response paired, the index exact
    assert.deepEqual(
      set.responses.map((r) => r.headers.get('warc-target-uri')),
      ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'],
    );
    await rm(join(dir, name));
    await rm(join(dir, name.replace(/\.warc\.gz$/, '.cdxj')));
  });

  test('a live writer of another machine is left alone, and so is one judged alive by its record', async () => {
    const name = await leftOpen(dir, 'ws8', 0);
    const before = await readFile(join(dir, `${name}.open`));
    assert.deepEqual(await repairDeadWarcs(dir, 'ws1', liveness([], { ws8: FAR })), []);
    assert.deepEqual(await repairDeadWarcs(dir, 'ws1', liveness([])), []);
    assert.deepEqual(await readFile(join(dir, `${name}.open`)), before, 'not a byte changed');
    // The id ws8 now runs as another process: the writer was an earlier run of it, and is dead.
    const done = await repairDeadWarcs(dir, 'ws1', liveness([], { ws8: { ...FAR, pid: FAR.pid + 1 } }));
    assert.equal(done.length, 1);
    await checkWarcDir(dir);
    for (const n of await readdir(dir)) await rm(join(dir, n));
  });

  test("a file of an earlier process with this node's own id is closed at once, without heartbeats", async () => {
    const name = await leftOpen(dir, 'ws9', 5);
    const done = await repairDeadWarcs(dir, 'ws9', undefined);
    assert.deepEqual(
      done.map((r) => r.name),
      [name],
    );
    await checkWarcDir(dir);
    for (const n of await readdir(dir)) await rm(join(dir, n));
  });

  test('two repairers at once: one claims the file, the other leaves it; the result is one whole file', async () => {
    const names = [await leftOpen(dir, 'ws9', 1), await leftOpen(dir, 'ws9', 2), await leftOpen(dir, 'ws9', 3)];
    const [a, b] = await Promise.all([repairDeadWarcs(dir, 'ws1', liveness(['ws9'])), repairDeadWarcs(dir, 'ws2', liveness(['ws9']))]);
    const repaired = [...a, ...b].map((r) => r.name).sort();
    assert.deepEqual(repaired, names, 'each file repaired exactly once');
    await checkWarcDir(dir);
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.startsWith('.')),
      [],
      'no claim left',
    );
    for (const n of await readdir(dir)) await rm(join(dir, n));
  });

  test("a claim whose repairer died is claimed again; a live repairer's claim is left to it", async () => {
    const name = await leftOpen(dir, 'ws9', 4);
    const claimA = claimNameOf(name, 'ws5');
    await writeFile(join(dir, claimA), await readFile(join(dir, `${name}.open`)));
    await rm(join(dir, `${name}.open`));
    assert.deepEqual(await repairDeadWarcs(dir, 'ws1', liveness(['ws9'])), [], 'ws5 is alive: its claim is its own');
    assert.ok((await readdir(dir)).includes(claimA));
    const done = await repairDeadWarcs(dir, 'ws1', liveness(['ws9', 'ws5']));
    assert.deepEqual(
      done.map((r) => r.name),
      [name],
    );
    await checkWarcDir(dir);
    for (const n of await readdir(dir)) await rm(join(dir, n));
  });

  test('a writer that was only slow finds its file taken and goes on in a new one: no record lost, no record torn', async () => {
    const warcDir = join(dir, 'slow');
    const warnings: string[] = [];
    const log: Logger = { debug: () => undefined, info: () => undefined, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
    const capture = new WarcCapture(
      { dir: warcDir, nodeId: 'slow', maxSize: 1 << 30, software: 'test', userAgent: 'test', robots: true, fsync: false },
      { clock: systemClock, log },
    );
    capture.capture(exchange('one', 'first batch'));
    await capture.flush();
    const [openName] = await readdir(warcDir).then((n) => n.filter((x) => x.endsWith('.open')));
    assert.ok(openName !== undefined);
    // Another node wrongly counts the writer dead (its heartbeat stalled) and closes its file.
    const done = await repairDeadWarcs(warcDir, 'ws1', liveness(['slow']));
    assert.equal(done.length, 1);
    capture.capture(exchange('two', 'second batch'));
    await capture.flush();
    await capture.close();
    const set = await checkWarcDir(warcDir);
    assert.equal(set.files.length, 2, 'the taken file and a new one');
    assert.deepEqual(set.responses.map((r) => r.http!.payload.toString()).sort(), ['first batch', 'second batch']);
    for (const f of set.files) assert.equal(parseWarcFile(await readFile(join(warcDir, f))).tail, 0);
    assert.match(warnings.join('\n'), /was closed by another node that counted this one dead/);
  });
});
