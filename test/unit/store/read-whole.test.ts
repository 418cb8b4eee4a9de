import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { unlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readWhole } from '../../../src/store/read-whole.js';
import { readJsonValidated } from '../../../src/store/read-record.js';
import { nodeMount } from '../../../src/store/mount.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mountcrawl-read-whole-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Bytes that differ at every position, so that a misplaced chunk shows. */
function pattern(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + (i >> 8)) & 0xff;
  return b;
}

describe('readWhole', () => {
  test('files of every size around the buffer growth steps come back byte for byte', async () => {
    // The first read is 16 KiB and the buffer grows 4 times when full.
    for (const size of [0, 1, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 64 * 1024, 64 * 1024 + 1, 1_000_000]) {
      const path = join(dir, `f${size}`);
      const data = pattern(size);
      await writeFile(path, data);
      const got = await readWhole(path);
      assert.equal(got.length, size);
      assert.ok(got.equals(data), `size ${size}`);
    }
  });

  test('shortReadEnds stops at a short read; without it reading goes on to a read of 0 bytes', async () => {
    // A FIFO delivers what was written so far as a short read, like a file still growing.
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const read = async (options?: { shortReadEnds: boolean }): Promise<string> => {
      // The writer ends when it is done or when the reader has gone (SIGPIPE).
      const writer = spawn('sh', ['-c', `exec 3> ${fifo}; printf first >&3; sleep 0.3; printf ' second' >&3`], { stdio: 'ignore' });
      const exited = new Promise((resolve) => writer.once('exit', resolve));
      try {
        return (await readWhole(fifo, options)).toString();
      } finally {
        await exited;
      }
    };
    assert.equal(await read({ shortReadEnds: true }), 'first');
    assert.equal(await read(), 'first second');
  });

  test('JSON records of every size around the first read size are read whole', async () => {
    for (const size of [100, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 70_000]) {
      const path = join(dir, `rec${size}.json`);
      const text = JSON.stringify({ n: size, pad: 'x'.repeat(size - 15 - String(size).length) });
      assert.equal(text.length, size);
      await writeFile(path, text);
      assert.equal(
        (await readJsonValidated(nodeMount, path, (v) => v as { n: number; pad: string })).pad.length,
        size - 15 - String(size).length,
      );
    }
  });

  test('a missing file rejects with ENOENT', async () => {
    await assert.rejects(readWhole(join(dir, 'missing')), { code: 'ENOENT' });
  });

  test('the size the file system reports is not trusted: reading goes on until a read returns 0', {
    skip: process.platform !== 'linux' ? 'needs /proc' : false,
  }, async () => {
    // /proc files report size 0 but have content, like a file another machine replaced.
    assert.equal((await stat('/proc/self/status')).size, 0);
    const got = await readWhole('/proc/self/status');
    assert.ok(got.length > 0);
    assert.match(got.toString(), /^Name:/);
  });
});

describe('readJsonValidated', () => {
  const check = (v: unknown): { n: number } => {
    if (typeof v !== 'object' || v === null || typeof (v as { n?: unknown }).n !== 'number') throw new Error('not a record');
    return v as { n: number };
  };

  test('returns what check makes of the parsed JSON', async () => {
    const path = join(dir, 'ok.json');
    await writeFile(path, JSON.stringify({ n: 3 }));
    assert.deepEqual(await readJsonValidated(nodeMount, path, check), { n: 3 });
    assert.equal(await readJsonValidated(nodeMount, path, (v) => (v as { n: number }).n * 2), 6);
  });

  test('JSON that never parses is read 4 times, then the parse error is thrown', async () => {
    const path = join(dir, 'torn.json');
    await writeFile(path, '{"n": 1'); // what a reader may see of a file cut short
    let calls = 0;
    await assert.rejects(
      readJsonValidated(nodeMount, path, (v) => {
        calls++;
        return check(v);
      }),
      SyntaxError,
    );
    assert.equal(calls, 0, 'check never sees a value that did not parse');
  });

  test('a value that never passes check is read 4 times, then the last check error is thrown', async () => {
    const path = join(dir, 'wrong.json');
    await writeFile(path, JSON.stringify({ wrong: true }));
    let calls = 0;
    await assert.rejects(
      readJsonValidated(nodeMount, path, (v) => {
        calls++;
        check(v);
        return v;
      }),
      /not a record/,
    );
    assert.equal(calls, 4);
  });

  test('a file replaced between attempts is read again and returned', async () => {
    const path = join(dir, 'becomes-valid.json');
    await writeFile(path, JSON.stringify({ wrong: true }));
    let calls = 0;
    const value = await readJsonValidated(nodeMount, path, (v) => {
      calls++;
      // The writer replaces the file while the first, failing, attempt looks at it.
      if (calls === 1) writeFileSync(path, JSON.stringify({ n: 9 }));
      return check(v);
    });
    assert.deepEqual(value, { n: 9 });
    assert.equal(calls, 2);
  });

  test('a missing file rejects with ENOENT at once, without retrying', async () => {
    let calls = 0;
    await assert.rejects(
      readJsonValidated(nodeMount, join(dir, 'missing.json'), (v) => {
        calls++;
        return v;
      }),
      { code: 'ENOENT' },
    );
    assert.equal(calls, 0);
  });

  test('a file removed between attempts rejects with ENOENT', async () => {
    const path = join(dir, 'goes-away.json');
    await writeFile(path, JSON.stringify({ wrong: true }));
    let calls = 0;
    await assert.rejects(
      readJsonValidated(nodeMount, path, (v) => {
        calls++;
        unlinkSync(path);
        return check(v);
      }),
      { code: 'ENOENT' },
    );
    assert.equal(calls, 1);
  });
});
