import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { systemClock } from '../../../src/config/clock.js';
import type { Logger } from '../../../src/progress/logger.js';
import { sortCdxj } from '../../../src/warc/cdxj.js';
import { WarcCapture } from '../../../src/warc/warc-capture.js';
import { exchange } from '../../support/warc-left-open.js';

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('sorted CDXJ (docs/warc.md, "Sorted indexes")', () => {
  test('lines sort by SURT key, then timestamp, exactly as LC_ALL=C sort does', () => {
    const text = [
      'org,example)/b 20261123120000 {"url":"http://example.org/b"}',
      'org,example)/ 20261123120001 {"url":"http://example.org/"}',
      'org,example)/a 20261123120000 {"url":"http://example.org/a"}',
      'org,example)/ 20261123115959 {"url":"http://example.org/"}',
      'org,example)/a?x=%C3%A9 20261123120000 {"url":"http://example.org/a?x=é"}',
      'com,example)/ 20261123120000 {"url":"http://example.com/"}',
      '',
    ].join('\n');
    const sorted = sortCdxj(text);
    const bySort = execFileSync('sort', {
      input:
        text
          .split('\n')
          .filter((l) => l !== '')
          .join('\n') + '\n',
      env: { LC_ALL: 'C' },
      encoding: 'utf8',
    });
    assert.equal(sorted, bySort);
    assert.match(sorted, /^com,example\)\/ .*\norg,example\)\/ 20261123115959 .*\norg,example\)\/ 20261123120001 /);
    assert.equal(sortCdxj(''), '');
    // Beyond the BMP, UTF-16 order is not byte order: U+1F600 sorts after U+FFFD in UTF-8.
    const wide = 'a\u{1F600} 20261123120000 {}\na\uFFFD 20261123120000 {}\n';
    assert.equal(sortCdxj(wide), execFileSync('sort', { input: wide, env: { LC_ALL: 'C' }, encoding: 'utf8' }));
    assert.ok(sortCdxj(wide).startsWith('a\uFFFD'));
  });

  test('a file closed at rotation, and the last one at close, has its index sorted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-cdxj-sort-'));
    try {
      const capture = new WarcCapture(
        { dir, nodeId: 'n1', maxSize: 6_000, software: 'test', userAgent: 'test', robots: true, fsync: false },
        { clock: systemClock, log: quiet },
      );
      // Written in an order that is not the sorted one.
      for (const p of ['z', 'm', 'a', 'q', 'b', 'y', 'c', 'x', 'd', 'w']) {
        capture.capture(exchange(p, `<p>${randomBytes(900).toString('hex')}</p>`));
        await capture.flush();
      }
      const names = (await readdir(dir)).sort();
      const closed = names.filter((n) => n.endsWith('.warc.gz'));
      assert.ok(closed.length >= 2, `rotated: ${names.join(' ')}`);
      let lines = 0;
      for (const name of closed) {
        const text = await readFile(join(dir, name.replace(/\.warc\.gz$/, '.cdxj')), 'utf8');
        assert.equal(text, sortCdxj(text), `${name}: sorted`);
        lines += text.split('\n').length - 1;
      }
      await capture.close();
      let all = 0;
      for (const name of (await readdir(dir)).filter((n) => n.endsWith('.cdxj'))) {
        const text = await readFile(join(dir, name), 'utf8');
        assert.equal(text, sortCdxj(text));
        all += text.split('\n').length - 1;
      }
      assert.ok(all === 10 && lines < all, `${lines} lines in the rotated files, ${all} in all`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
