import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { LineThreads } from '../../../src/cli/export-threads.js';
import { serializeRecord } from '../../../src/store/records.js';
import { pageRecord } from '../../support/links-records.js';
import { freshDirs } from '../../support/temp-paths.js';

const dirs = freshDirs('mountcrawl-export-threads-');

const ERRS = {
  v: 1,
  url: 'http://a.test/e',
  code: 'HTTP_STATUS',
  message: 'status 500',
  final: true,
  attempts: 3,
  firstAt: '2025-01-15T12:00:00.000Z',
  lastAt: '2025-01-15T12:00:01.000Z',
  nextAttemptAt: null,
  depth: 1,
  node: 'n1',
};

/** A host's links and errs directories holding records k0..k(n-1), and errs record e0. */
async function host(n: number): Promise<{ links: string; errs: string; pages: ReturnType<typeof pageRecord>[] }> {
  const root = await dirs();
  const links = join(root, 'links');
  const errs = join(root, 'errs');
  await mkdir(links);
  await mkdir(errs);
  const pages = Array.from({ length: n }, (_, i) => pageRecord(`http://a.test/p${i}`, { depth: i, links: [`http://a.test/p${i + 1}`] }));
  for (const [i, page] of pages.entries()) await writeFile(join(links, `k${i}.json`), serializeRecord(page));
  await writeFile(join(errs, 'e0.json'), serializeRecord(ERRS));
  return { links, errs, pages };
}

describe('LineThreads', () => {
  test('the lines of a job in order: links records, then errs records; absent and torn records have none', async () => {
    const { links, errs, pages } = await host(5);
    await writeFile(join(links, 'k2.json'), '{"v": 1, "url": "http://a.test/p');
    const threads = new LineThreads(2);
    try {
      const records = [...['k0', 'k1', 'k2', 'gone', 'k3', 'k4'].map((key) => ({ key, errs: false })), { key: 'e0', errs: true }];
      const jobs = await Promise.all([
        threads.lines({ links, errs }, records, undefined),
        threads.lines({ links, errs }, records, ['key', 'depth']),
      ]);
      const whole = [0, 1, 3, 4].map((i) => JSON.stringify(pages[i])).concat(JSON.stringify(ERRS));
      assert.equal(jobs[0]!.toString('utf8'), `${whole.join('\n')}\n`);
      const keyed = ['k0', 'k1', 'k3', 'k4'].map((key, i) => JSON.stringify({ key, depth: [0, 1, 3, 4][i] }));
      assert.equal(jobs[1]!.toString('utf8'), `${[...keyed, JSON.stringify({ key: 'e0', depth: 1 })].join('\n')}\n`);
    } finally {
      await threads.close();
    }
  });

  test('a record that cannot be read (not absent, not torn) rejects its job with its error code; later jobs still run', async () => {
    const { links, errs } = await host(2);
    await mkdir(join(links, 'dir.json'));
    const threads = new LineThreads(1);
    try {
      await assert.rejects(threads.lines({ links, errs }, [{ key: 'dir', errs: false }], undefined), { code: 'EISDIR' });
      const after = await threads.lines({ links, errs }, [{ key: 'k1', errs: false }], undefined);
      assert.equal(after.toString('utf8').split('\n').length, 2);
    } finally {
      await threads.close();
    }
  });

  test('a thread that stops rejects the jobs it had not answered', async () => {
    const { links, errs } = await host(1);
    const threads = new LineThreads(1);
    const job = threads.lines({ links, errs }, [{ key: 'k0', errs: false }], undefined);
    await threads.close();
    await assert.rejects(job, /export thread stopped/);
  });
});
