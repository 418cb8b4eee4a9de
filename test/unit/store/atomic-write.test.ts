import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, readdirSync } from 'node:fs';
import { mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { writeFileAtomic } from '../../../src/store/atomic-write.js';
import { hookFs } from '../../support/fs-hook.js';
import { leavesNoLitter } from '../../support/left-temps.js';
import { tempOwner } from '../../../src/store/temp-names.js';
import { freshDirs } from '../../support/temp-paths.js';
import { nodeMount } from '../../../src/store/mount.js';

const NODE_ID = 'ws1.example.org-1234';
const OPTIONS = { nodeId: NODE_ID, fsync: false } as const;

const freshDir = freshDirs('mountcrawl-atomic-');

describe('writeFileAtomic', () => {
  test('an open that failed with EIO but created the file (a lost reply) leaves no litter once the mount is back', async () => {
    const dir = await freshDir();
    type Cb = (err: NodeJS.ErrnoException | null, fd?: number) => void;
    const restore = hookFs<(p: string, f: string, m: number, cb: Cb) => void>(
      'open',
      (original) => (p, f, m, cb) =>
        original(p, f, m, (err, fd) => {
          if (err !== null || !p.includes('~')) return cb(err, fd);
          closeSync(fd!);
          cb(Object.assign(new Error('EIO: i/o error, open'), { code: 'EIO' }));
        }),
    );
    try {
      await assert.rejects(writeFileAtomic(nodeMount, join(dir, 'page.html'), '<html>', OPTIONS), /EIO/);
    } finally {
      restore();
    }
    assert.equal((await readdir(dir)).length, 1, 'the server made the file');
    assert.equal(await nodeMount.temps.removeLeft(), 0);
    assert.deepEqual(await readdir(dir), []);
  });

  test('a temporary file the failing mount would not let go is removed once it is back (no litter after a fault)', async () => {
    const dir = await freshDir();
    type Cb = (...args: unknown[]) => void;
    // The mount fails between the write and the rename, and the removal of the temp fails too.
    const restoreRename = hookFs<(a: string, b: string, cb: Cb) => void>(
      'rename',
      () => (_a, _b, cb) => cb(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })),
    );
    try {
      await leavesNoLitter(dir, NODE_ID, () =>
        assert.rejects(writeFileAtomic(nodeMount, join(dir, 'page.html'), '<html>', OPTIONS), /EIO/),
      );
    } finally {
      restoreRename();
    }
  });

  test('writes the bytes, or a string as UTF-8, and leaves nothing else behind', async () => {
    const dir = await freshDir();
    await writeFileAtomic(nodeMount, join(dir, 'a.bin'), Uint8Array.from([0, 1, 2, 255]), OPTIONS);
    await writeFileAtomic(nodeMount, join(dir, 'b.json'), '{"url":"http://example.com/ü"}', OPTIONS);
    assert.deepEqual(await readFile(join(dir, 'a.bin')), Buffer.from([0, 1, 2, 255]));
    assert.equal(await readFile(join(dir, 'b.json'), 'utf8'), '{"url":"http://example.com/ü"}');
    assert.deepEqual((await readdir(dir)).sort(), ['a.bin', 'b.json']);
  });

  test('a rewrite replaces the file with a new one: a reader holding the old one keeps it whole', async () => {
    const dir = await freshDir();
    const path = join(dir, 'record.json');
    await writeFileAtomic(nodeMount, path, 'old version', OPTIONS);
    const oldInode = (await stat(path)).ino;
    const reader = await open(path, 'r');
    try {
      await writeFileAtomic(nodeMount, path, 'new version, longer', OPTIONS);
      assert.equal(await readFile(path, 'utf8'), 'new version, longer');
      assert.notEqual((await stat(path)).ino, oldInode, 'a new file took the name (rename), not an overwrite');
      // The reader that opened the old file still reads all of it, unmixed.
      assert.equal((await reader.readFile()).toString(), 'old version');
    } finally {
      await reader.close();
    }
    assert.deepEqual(await readdir(dir), ['record.json']);
  });

  test('while the bytes are written they sit in a hidden temporary file that names the node', async () => {
    const dir = await freshDir();
    const path = join(dir, 'page.html');
    let during: string[] = [];
    // Look at the directory when the bytes are written: after the temporary file was created
    // and before it is renamed.
    type Write = (fd: number, ...rest: unknown[]) => void;
    const restore = hookFs<Write>('write', (original) => (fd, ...rest) => {
      during = readdirSync(dir);
      original(fd, ...rest);
    });
    try {
      await writeFileAtomic(nodeMount, path, '<html>', OPTIONS);
    } finally {
      restore();
    }
    assert.equal(during.length, 1, 'only the temporary file exists during the write');
    const temp = during[0]!;
    assert.ok(temp.startsWith('.page.html~'), temp);
    assert.equal(tempOwner(temp), NODE_ID);
    assert.deepEqual(await readdir(dir), ['page.html']);
    assert.equal(await readFile(path, 'utf8'), '<html>');
  });

  test('concurrent writes to one path each use their own temporary file; one of them wins whole', async () => {
    const dir = await freshDir();
    const path = join(dir, 'same.json');
    const versions = Array.from({ length: 20 }, (_, i) => `version ${i} `.repeat(1000));
    await Promise.all(versions.map((v) => writeFileAtomic(nodeMount, path, v, OPTIONS)));
    assert.ok(versions.includes(await readFile(path, 'utf8')));
    assert.deepEqual(await readdir(dir), ['same.json']);
  });

  test('fsync: true writes the same bytes', async () => {
    const dir = await freshDir();
    await writeFileAtomic(nodeMount, join(dir, 'synced'), 'durable', { nodeId: NODE_ID, fsync: true });
    assert.equal(await readFile(join(dir, 'synced'), 'utf8'), 'durable');
  });
});

describe('writeFileAtomic: failures leave no temporary file', () => {
  test('a missing directory rejects with ENOENT and creates nothing', async () => {
    const dir = await freshDir();
    await assert.rejects(writeFileAtomic(nodeMount, join(dir, 'no-such-dir', 'x.json'), '{}', OPTIONS), { code: 'ENOENT' });
    assert.deepEqual(await readdir(dir), []);
  });

  test('a failing write removes the temporary file and keeps the old version', async () => {
    const dir = await freshDir();
    const path = join(dir, 'x.json');
    await writeFile(path, 'old');
    // The first write lands, the second fails (as a full disk would).
    type Write = (fd: number, buf: Uint8Array, off: number, len: number, pos: null, cb: (e: Error | null, n: number) => void) => void;
    let calls = 0;
    const restore = hookFs<Write>('write', (original) => (fd, buf, off, len, pos, cb) => {
      if (++calls === 1) return original(fd, buf, off, Math.min(len, 7), pos, cb);
      cb(Object.assign(new Error('ENOSPC: disk on fire'), { code: 'ENOSPC' }), 0);
    });
    try {
      await assert.rejects(writeFileAtomic(nodeMount, path, 'partial and the rest', OPTIONS), /disk on fire/);
    } finally {
      restore();
    }
    assert.deepEqual(await readdir(dir), ['x.json']);
    assert.equal(await readFile(path, 'utf8'), 'old');
  });

  test('a failing rename (the target is a directory) removes the temporary file', async () => {
    const dir = await freshDir();
    await mkdir(join(dir, 'target'));
    await writeFile(join(dir, 'target', 'inside'), 'keep');
    await assert.rejects(writeFileAtomic(nodeMount, join(dir, 'target'), 'data', OPTIONS));
    assert.deepEqual(await readdir(dir), ['target']);
    assert.deepEqual(await readdir(join(dir, 'target')), ['inside']);
  });
});

/** A child script that rewrites one file in a tight loop with two alternating 1 MiB contents. */
function writerScript(moduleUrl: string): string {
  return `
import { writeFileAtomic } from ${JSON.stringify(moduleUrl)};
import { nodeMount } from ${JSON.stringify(new URL('mount.js', moduleUrl).href)};
const [path, nodeId] = process.argv.slice(2);
const contents = [Buffer.alloc(1 << 20, 'a'), Buffer.alloc(1 << 20, 'b')];
await writeFileAtomic(nodeMount, path, contents[0], { nodeId, fsync: false });
process.stdout.write('ready\\n');
for (let i = 1; ; i++) await writeFileAtomic(nodeMount, path, contents[i % 2], { nodeId, fsync: false });
`;
}

/** Resolves once the child prints its first line; rejects if it exits first. */
function waitForReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready\n')) resolve();
    });
    child.once('exit', (code, signal) => reject(new Error(`writer exited early: ${code ?? signal}`)));
    child.once('error', reject);
  });
}

describe('writeFileAtomic: SIGKILL (docs/protocol.md, invariant 1)', () => {
  test('a reader never sees a partial file while a writer rewrites it, nor after the writer is killed', async () => {
    const dir = await freshDir();
    const path = join(dir, 'record.bin');
    const script = join(dir, '.writer.mjs');
    // The compiled module beside this compiled test: dist/src/store/atomic-write.js.
    await writeFile(script, writerScript(new URL('../../../src/store/atomic-write.js', import.meta.url).href));
    const A = Buffer.alloc(1 << 20, 'a');
    const B = Buffer.alloc(1 << 20, 'b');
    const isWhole = (b: Buffer): boolean => b.equals(A) || b.equals(B);

    const child = spawn(process.execPath, [script, path, NODE_ID], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await waitForReady(child);
      const seen = new Set<string>();
      const temps = new Set<string>();
      let reads = 0;
      // Read until both versions and a temporary file were seen (proof that the writer was busy
      // while we read), at least 200 times; the deadline only guards against a stuck writer.
      const deadline = Date.now() + 60_000;
      while (reads < 200 || seen.size < 2 || temps.size === 0) {
        assert.ok(Date.now() < deadline, `reads=${reads} versions=${seen.size} temps=${temps.size}`);
        const body = await readFile(path);
        reads++;
        assert.ok(isWhole(body), `read ${reads}: ${body.length} bytes, not one whole version`);
        seen.add(String.fromCharCode(body[0]!));
        for (const name of await readdir(dir)) {
          if (name === 'record.bin' || name === '.writer.mjs') continue;
          assert.ok(name.startsWith('.'), `temporary file ${name} is not hidden`);
          assert.equal(tempOwner(name), NODE_ID, name);
          temps.add(name);
        }
      }
      assert.deepEqual([...seen].sort(), ['a', 'b']);

      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      assert.ok(child.kill('SIGKILL'));
      assert.equal(await exited, 'SIGKILL');

      // After the kill: the file is one whole version; what may be left is at most one hidden
      // temporary file of the dead node, for whoever takes its hosts over to remove.
      assert.ok(isWhole(await readFile(path)));
      const left = (await readdir(dir)).filter((n) => n !== 'record.bin' && n !== '.writer.mjs');
      assert.ok(left.length <= 1, left.join(', '));
      for (const name of left) {
        assert.ok(name.startsWith('.'), name);
        assert.equal(tempOwner(name), NODE_ID, name);
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
