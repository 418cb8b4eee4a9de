import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic, writeFilesAtomic } from '../../../src/store/atomic-write.js';
import { type WriteFailure, WriteThread, WriteThreadLost } from '../../../src/store/write-thread.js';
import { runNodeScript } from '../../support/node-script.js';
import { freshDirs } from '../../support/temp-paths.js';
import { nodeMount } from '../../../src/store/mount.js';

const NODE_ID = 'ws1-100';
const freshDir = freshDirs('mountcrawl-writethread-');

/** Bytes that say where they belong: byte i of file n is (n * 7 + i) mod 251. */
function bytesOf(n: number, length: number): Uint8Array {
  const b = new Uint8Array(length);
  for (let i = 0; i < length; i++) b[i] = (n * 7 + i) % 251;
  return b;
}

const linux = process.platform === 'linux' ? {} : { skip: 'WriteThread is used on Linux only' };

describe('WriteThread', linux, () => {
  test('many writes at once, of every kind of data: each file whole and exact, no temporary file left', async () => {
    const dir = await freshDir();
    const thread = new WriteThread();
    try {
      const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 253); // more than the ring takes at once
      const pool = Buffer.alloc(200_000, 0x61);
      const expected = new Map<string, Uint8Array>();
      const writes: Promise<void>[] = [];
      for (let n = 0; n < 400; n++) {
        const path = join(dir, `f${n}`);
        let data: string | Uint8Array;
        if (n % 5 === 0)
          data = `{"n":${n},"text":"ünïcødé ✓ ${'x'.repeat(n * 13)}"}\n`; // a record: a string
        else if (n % 5 === 1)
          data = bytesOf(n, 45_000 + n); // a body of its own
        else if (n % 5 === 2)
          data = pool.subarray(n, n + 30_000 + n); // a view into a larger buffer
        else if (n % 5 === 3) data = n === 3 ? new Uint8Array(0) : bytesOf(n, 120_000);
        else data = n === 4 ? big : bytesOf(n, 1 + n);
        expected.set(path, typeof data === 'string' ? new Uint8Array(Buffer.from(data)) : Uint8Array.from(data));
        writes.push(writeFileAtomic(nodeMount, path, data, { nodeId: NODE_ID, fsync: false, thread }));
      }
      await Promise.all(writes);
      assert.equal(thread.usable, true, 'the thread made them (it did not fail over to the pool)');
      for (const [path, bytes] of expected) assert.deepEqual(new Uint8Array(await readFile(path)), bytes, path);
      assert.equal((await readdir(dir)).length, 400, 'no temporary file');
      assert.equal(big.length, 3 * 1024 * 1024, "the caller's buffer is still whole (copied, not moved)");
    } finally {
      thread.close();
    }
  });

  test('writes one after another wrap around the ring many times: every file exact', async () => {
    const dir = await freshDir();
    const thread = new WriteThread();
    try {
      // 60 rounds of 8 writes of 300 KB: 144 MB through a ring of 4 MB.
      for (let round = 0; round < 60; round++) {
        await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            writeFileAtomic(nodeMount, join(dir, `f${i}`), bytesOf(round * 8 + i, 300_000 + round), {
              nodeId: NODE_ID,
              fsync: false,
              thread,
            }),
          ),
        );
        for (let i = 0; i < 8; i += 3)
          assert.deepEqual(new Uint8Array(await readFile(join(dir, `f${i}`))), bytesOf(round * 8 + i, 300_000 + round));
      }
    } finally {
      thread.close();
    }
  });

  test('a failed create: the error of the call (code, syscall, the real path), nothing left', async () => {
    const dir = await freshDir();
    const thread = new WriteThread();
    try {
      const path = join(dir, 'missing', 'page.html');
      await assert.rejects(
        writeFileAtomic(nodeMount, path, 'x', { nodeId: NODE_ID, fsync: false, thread }),
        (err: NodeJS.ErrnoException) => {
          assert.equal(err.code, 'ENOENT');
          assert.equal(err.syscall, 'open');
          assert.ok(err.path?.startsWith(`${join(dir, 'missing')}/.page.html~${NODE_ID}~`), err.path);
          assert.match(err.message, /^ENOENT: no such file or directory, open /);
          return true;
        },
      );
      assert.deepEqual(await readdir(dir), []);
    } finally {
      thread.close();
    }
  });

  test('writeInOrder: one after another; after a failure the later files are skipped, never created', async () => {
    const dir = await freshDir();
    const thread = new WriteThread();
    try {
      const file = (name: string, data: string) => ({ tmp: join(dir, `.${name}.tmp`), path: join(dir, name), data });
      const made = await Promise.all(thread.writeInOrder([file('a', 'A'), file('b', 'B'), file('c', 'C')]));
      assert.deepEqual(made, [undefined, undefined, undefined]);
      assert.deepEqual(await Promise.all(['a', 'b', 'c'].map((n) => readFile(join(dir, n), 'utf8'))), ['A', 'B', 'C']);
      // The second cannot be created (no such directory): the third is not tried.
      const bad = { tmp: join(dir, 'missing', '.x.tmp'), path: join(dir, 'missing', 'x'), data: 'X' };
      const answers = await Promise.all(thread.writeInOrder([file('d', 'D'), bad, file('e', 'E')]));
      assert.equal(answers[0], undefined);
      assert.equal(answers[1]?.step, 'open');
      assert.equal(answers[1]?.code, 'ENOENT');
      assert.equal(answers[2]?.step, 'skipped');
      assert.deepEqual((await readdir(dir)).sort(), ['a', 'b', 'c', 'd']);
    } finally {
      thread.close();
    }
  });

  test('writeFilesAtomic by the thread: the first failure is thrown as writeFileAtomic throws it; the files after it are not written', async () => {
    const dir = await freshDir();
    const thread = new WriteThread();
    try {
      await writeFilesAtomic(
        nodeMount,
        [
          { path: join(dir, 'p.html'), data: new Uint8Array([1, 2]) },
          { path: join(dir, 'p.json'), data: '{}' },
        ],
        { nodeId: NODE_ID, fsync: false, thread },
      );
      assert.deepEqual([...(await readFile(join(dir, 'p.html')))], [1, 2]);
      assert.equal(await readFile(join(dir, 'p.json'), 'utf8'), '{}');
      // A directory where the first file goes: its rename fails, its temporary file is removed.
      await mkdir(join(dir, 'q.html'));
      await writeFile(join(dir, 'q.html', 'inside'), '');
      await assert.rejects(
        writeFilesAtomic(
          nodeMount,
          [
            { path: join(dir, 'q.html'), data: 'x' },
            { path: join(dir, 'q.json'), data: '{}' },
          ],
          { nodeId: NODE_ID, fsync: false, thread },
        ),
        (err: NodeJS.ErrnoException) => err.syscall === 'rename',
      );
      assert.deepEqual((await readdir(dir)).sort(), ['p.html', 'p.json', 'q.html'], 'no q.json, no temporary file');
    } finally {
      thread.close();
    }
  });

  test('a failed rename: its error, and the temporary file removed', async () => {
    const dir = await freshDir();
    const thread = new WriteThread();
    try {
      // The name is a directory that is not empty: the rename cannot replace it.
      await mkdir(join(dir, 'page.html'));
      await writeFile(join(dir, 'page.html', 'inside'), '');
      await assert.rejects(
        writeFileAtomic(nodeMount, join(dir, 'page.html'), 'x', { nodeId: NODE_ID, fsync: false, thread }),
        (err: NodeJS.ErrnoException) => {
          assert.equal(err.syscall, 'rename');
          assert.ok(['EISDIR', 'ENOTEMPTY', 'EEXIST'].includes(err.code ?? ''), err.code);
          return true;
        },
      );
      assert.deepEqual(await readdir(dir), ['page.html']);
      assert.equal(thread.usable, true, 'a failed write does not stop the thread');
      await writeFileAtomic(nodeMount, join(dir, 'next.html'), 'y', { nodeId: NODE_ID, fsync: false, thread });
      assert.equal(await readFile(join(dir, 'next.html'), 'utf8'), 'y');
    } finally {
      thread.close();
    }
  });

  test('close: writes already sent are made; later ones go through the pool', async () => {
    const dir = await freshDir();
    const thread = new WriteThread();
    const sent = writeFileAtomic(nodeMount, join(dir, 'a'), 'before', { nodeId: NODE_ID, fsync: false, thread });
    thread.close();
    assert.equal(thread.usable, false);
    await sent;
    await writeFileAtomic(nodeMount, join(dir, 'b'), 'after', { nodeId: NODE_ID, fsync: false, thread });
    assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'before');
    assert.equal(await readFile(join(dir, 'b'), 'utf8'), 'after');
    const [refused] = thread.writeInOrder([{ tmp: join(dir, '.t'), path: join(dir, 't'), data: 'x' }]);
    await assert.rejects(refused!, WriteThreadLost);
  });

  test('a thread lost before it answered (one file or several): the temporary files go and the pool makes every write', async () => {
    const dir = await freshDir();
    // Stands for a thread that created the first temporary file and then stopped.
    const lost = {
      usable: true,
      writeInOrder(files: { tmp: string }[]): Promise<WriteFailure | undefined>[] {
        const half = writeFile(files[0]!.tmp, 'half').then(() => {
          throw new WriteThreadLost(new Error('exited'));
        });
        return files.map(() => half);
      },
    } as unknown as WriteThread;
    await writeFileAtomic(nodeMount, join(dir, 'page.html'), 'whole', { nodeId: NODE_ID, fsync: false, thread: lost });
    assert.equal(await readFile(join(dir, 'page.html'), 'utf8'), 'whole');
    const files = [
      { path: join(dir, 'r.html'), data: 'page' },
      { path: join(dir, 'r.json'), data: '{"v":1}' },
    ];
    await writeFilesAtomic(nodeMount, files, { nodeId: NODE_ID, fsync: false, thread: lost });
    assert.deepEqual((await readdir(dir)).sort(), ['page.html', 'r.html', 'r.json']);
    assert.equal(await readFile(join(dir, 'r.json'), 'utf8'), '{"v":1}');
  });

  test('an idle thread, started or used, does not keep the process alive', async () => {
    const dir = await freshDir();
    const module = fileURLToPath(new URL('../../../src/store/write-thread.js', import.meta.url));
    const atomic = fileURLToPath(new URL('../../../src/store/atomic-write.js', import.meta.url));
    const script = `
      const { WriteThread } = await import(${JSON.stringify(module)});
      const { writeFileAtomic } = await import(${JSON.stringify(atomic)});
      const { nodeMount } = await import(${JSON.stringify(atomic.replace('atomic-write.js', 'mount.js'))});
      // One thread started and never sent a write, one started before its write.
      new WriteThread().start();
      const thread = new WriteThread();
      thread.start();
      await new Promise((r) => setTimeout(r, 100));
      await writeFileAtomic(nodeMount, ${JSON.stringify(join(dir, 'a'))}, 'from a child', { nodeId: 'c', fsync: false, thread });
      console.log(thread.usable ? 'written by the thread' : 'the thread failed');`;
    const { code, stdout } = await runNodeScript(dir, script, 10_000);
    assert.equal(stdout, 'written by the thread');
    assert.equal(code, 0, 'exited by itself (not killed after 10 s)');
    assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'from a child');
  });

  test('forDataDir: none with --fsync, none where the directory cannot be read; on a local disk, one', async () => {
    const dir = await freshDir();
    assert.equal(await WriteThread.forDataDir(dir, { fsync: true }), undefined);
    assert.equal(await WriteThread.forDataDir(join(dir, 'never-made'), { fsync: false }), undefined);
    assert.equal(await WriteThread.forDataDir('/proc/self', { fsync: false }), undefined, 'procfs is not a disk');
    // The test's own directory, on the disk kinds a CI machine has (ext4, tmpfs, overlayfs, XFS, Btrfs).
    const type = (await statfs(dir)).type;
    if ([0xef53, 0x01021994, 0x794c7630, 0x58465342, 0x9123683e].includes(type)) {
      const thread = await WriteThread.forDataDir(dir, { fsync: false });
      assert.ok(thread instanceof WriteThread, `a thread on file system type 0x${type.toString(16)}`);
      thread.close();
    } else {
      assert.fail(`the test directory is on file system type 0x${type.toString(16)}: add it here or to LOCAL_FS`);
    }
  });
});
