import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { writeFileAtomic, writeFilesAtomic } from '../../../src/store/atomic-write.js';
import { createExclusive } from '../../../src/store/exclusive-create.js';
import { tempOwner } from '../../../src/store/temp-names.js';
import { Mount, nodeMount } from '../../../src/store/mount.js';
import { readJsonValidated, readRecord } from '../../../src/store/read-record.js';
import { FakeClock } from '../../support/fake-clock.js';
import { MemoryFs } from '../../support/memory-fs.js';

const OPTIONS = { nodeId: 'n1', fsync: false };

/** A MemoryFs whose rename and unlink fail with EIO while `cut` is true (a mount whose link is cut). */
class CutFs extends MemoryFs {
  cut = false;
  override rename(from: string, to: string): Promise<void> {
    return this.cut ? Promise.reject(Object.assign(new Error('EIO: rename'), { code: 'EIO' })) : super.rename(from, to);
  }
  override unlink(path: string): Promise<void> {
    return this.cut ? Promise.reject(Object.assign(new Error('EIO: unlink'), { code: 'EIO' })) : super.unlink(path);
  }
}

/** Temporary files (tempOwner) of a MemoryFs. */
const temps = (fs: MemoryFs): string[] => fs.files((p) => tempOwner(p.slice(p.lastIndexOf('/') + 1)) !== undefined);

describe('Mount on a file system that is not the real one', () => {
  test('only the real file system is native (the fast paths)', () => {
    assert.equal(nodeMount.native, true);
    assert.equal(new Mount(new MemoryFs(), new FakeClock()).native, false);
  });

  test('the atomic write: writeNew of a temporary file, then rename over the old version; nothing else left', async () => {
    const fs = new MemoryFs();
    const mount = new Mount(fs, new FakeClock());
    await fs.mkdir('/d');
    await writeFileAtomic(mount, '/d/a.json', 'old', OPTIONS);
    await writeFileAtomic(mount, '/d/a.json', 'new', OPTIONS);
    await writeFilesAtomic(
      mount,
      [
        { path: '/d/b.html', data: new Uint8Array([1, 2]) },
        { path: '/d/b.json', data: '{}' },
      ],
      OPTIONS,
    );
    assert.equal((await fs.readFile('/d/a.json')).toString(), 'new');
    assert.deepEqual(await fs.readdir('/d'), ['a.json', 'b.html', 'b.json']);
    assert.deepEqual([fs.calls.get('writeNew'), fs.calls.get('rename')], [4, 4]);
    await assert.rejects(writeFileAtomic(mount, '/nope/a.json', 'x', OPTIONS), { code: 'ENOENT' });
  });

  test('a write that fails on a cut mount leaves its temporary file to the node, which removes it once the mount is back', async () => {
    const fs = new CutFs();
    const mount = new Mount(fs, new FakeClock());
    await fs.mkdir('/d');
    fs.cut = true;
    await assert.rejects(writeFileAtomic(mount, '/d/a.json', 'x', OPTIONS), { code: 'EIO' });
    assert.equal(temps(fs).length, 1);
    assert.equal(await mount.temps.removeLeft(), 1, 'still cut: still there');
    fs.cut = false;
    assert.equal(await mount.temps.removeLeft(), 0);
    assert.deepEqual(fs.files(), []);
  });

  test('the exclusive create: one winner among racers, the file whole, no temporary file left', async () => {
    const fs = new MemoryFs();
    const mount = new Mount(fs, new FakeClock());
    await fs.mkdir('/h');
    const won = await Promise.all(Array.from({ length: 10 }, (_, i) => createExclusive(mount, '/h/x.lease', `node ${i}\n`, `n${i}`)));
    assert.equal(won.filter((w) => w).length, 1);
    assert.equal((await fs.readFile('/h/x.lease')).toString(), `node ${won.indexOf(true)}\n`);
    assert.deepEqual(temps(fs), []);
  });

  test("a torn record is read again after a pause on the node's clock, not on the machine's", async () => {
    const clock = new FakeClock();
    const fs = new MemoryFs();
    await fs.writeNew('/r.json', '{"n":1}');
    let reads = 0;
    const torn = Object.assign(Object.create(fs) as MemoryFs, {
      readFile: (path: string) => (reads++ === 0 ? Promise.resolve(Buffer.from('{"n"')) : fs.readFile(path)),
    });
    let value: { n: number } | undefined;
    const read = readJsonValidated(new Mount(torn, clock), '/r.json', (v) => v as { n: number }).then((v) => (value = v));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(value, undefined, 'waiting for the clock');
    clock.advance(5);
    await read;
    assert.deepEqual(value, { n: 1 });
    assert.equal(reads, 2);
    assert.deepEqual(await readRecord(new Mount(fs, clock), '/none.json', (v) => v), { kind: 'absent' });
  });

  test('ids from the random source given, UUIDs without one', () => {
    let x = 0;
    const ids = new Mount(new MemoryFs(), new FakeClock(), () => (x = (x + 0.37) % 1));
    assert.match(ids.newId(), /^[0-9a-f]{32}$/);
    assert.notEqual(ids.newId(), ids.newId());
    assert.match(nodeMount.newId(), /^[0-9a-f]{8}-[0-9a-f]{4}-/);
  });
});
