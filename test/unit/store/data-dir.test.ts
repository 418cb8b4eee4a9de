import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ExitCode, FatalError } from '../../../src/errors.js';
import { openDataDir, openExistingDataDir, readMarker, type Marker } from '../../../src/store/data-dir.js';
import { DIRS, LATER_DIRS, Layout, MARKER_FILE } from '../../../src/store/layout.js';
import { Mount } from '../../../src/store/mount.js';
import { nodeMountFs } from '../../../src/store/node-mount-fs.js';
import { systemClock } from '../../../src/config/clock.js';

const NODE = 'ws1-100';
const NORMALIZATION = { version: 1, sessionParams: ['sid', 'jsessionid'] } as const;

let root: string;
let counter = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mountcrawl-datadir-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

const fresh = (): string => join(root, `t${counter++}`);

function isFatal(code: string, exitCode: number = ExitCode.DATA_DIR) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof FatalError, String(err));
    assert.equal(err.code, code);
    assert.equal(err.exitCode, exitCode);
    assert.ok(!err.message.includes('\n'), 'one line');
    return true;
  };
}

describe('openDataDir', () => {
  test('creates the directory (with parents), every subdirectory and the marker', async () => {
    const dir = join(fresh(), 'nested', 'data');
    const { layout, marker } = await openDataDir(dir, NODE, NORMALIZATION);
    assert.equal(layout.root, dir);
    assert.deepEqual((await readdir(dir)).sort(), [MARKER_FILE, ...Object.values(DIRS)].sort(), 'no temp file left');
    for (const name of Object.values(DIRS)) assert.ok((await stat(join(dir, name))).isDirectory(), name);
    const onDisk = JSON.parse(await readFile(join(dir, MARKER_FILE), 'utf8')) as Marker;
    assert.deepEqual(onDisk, marker);
    assert.equal(marker.format, 'mountcrawl');
    assert.equal(marker.version, 1);
    assert.match(marker.id, /^[0-9a-f-]{36}$/);
    assert.ok(!Number.isNaN(Date.parse(marker.createdAt)));
    assert.deepEqual(marker.normalization, NORMALIZATION);
  });

  test('without a normalization the marker has none', async () => {
    const { marker } = await openDataDir(fresh(), NODE);
    assert.equal('normalization' in marker, false);
  });

  test('reopening keeps the marker: same id, the normalization it was created with', async () => {
    const dir = fresh();
    const first = await openDataDir(dir, NODE, NORMALIZATION);
    const again = await openDataDir(dir, 'ws2-200', { version: 1, sessionParams: [] });
    assert.deepEqual(again.marker, first.marker);
    assert.deepEqual(await readMarker(new Layout(dir)), first.marker);
  });

  test('recreates missing subdirectories of an existing data directory', async () => {
    const dir = fresh();
    await openDataDir(dir, NODE);
    await rm(join(dir, 'links'), { recursive: true });
    await openDataDir(dir, NODE);
    assert.ok((await stat(join(dir, 'links'))).isDirectory());
  });

  test('refuses a non-empty directory without a marker, and creates nothing in it', async () => {
    const dir = fresh();
    await mkdir(dir);
    await writeFile(join(dir, 'thesis.tex'), 'precious');
    await assert.rejects(openDataDir(dir, NODE), isFatal('NOT_A_DATA_DIR'));
    assert.deepEqual(await readdir(dir), ['thesis.tex']);
  });

  test('accepts a directory that holds only hidden files, or only its own subdirectories', async () => {
    const hidden = fresh();
    await mkdir(hidden);
    await writeFile(join(hidden, '.DS_Store'), '');
    await mkdir(join(hidden, '.snapshot'));
    const a = await openDataDir(hidden, NODE);
    assert.ok((await stat(join(hidden, MARKER_FILE))).isFile());
    assert.equal(a.marker.format, 'mountcrawl');

    // A creation that stopped after some subdirectories, before the marker.
    const partial = fresh();
    await mkdir(join(partial, 'links'), { recursive: true });
    await mkdir(join(partial, 'seeds'));
    const b = await openDataDir(partial, NODE);
    assert.equal(b.marker.format, 'mountcrawl');

    // The folders a crawl makes later (summaries, warc, schedule, sitemaps) are its own too.
    const later = fresh();
    for (const name of LATER_DIRS) await mkdir(join(later, name), { recursive: true });
    const c = await openDataDir(later, NODE);
    assert.equal(c.marker.format, 'mountcrawl');
  });

  test('a marker another node made between the read of the marker and the listing: taken, not NOT_A_DATA_DIR', async () => {
    const dir = fresh();
    await mkdir(dir);
    const other = await openDataDir(join(root, `t${counter++}`), 'other', NORMALIZATION);
    let listed = false;
    // The listing comes after this node read no marker; the other node writes it, and a file of its own, first.
    const readdirBefore = nodeMountFs.readdir;
    const mount = new Mount(
      {
        ...nodeMountFs,
        readdir: async (path: string) => {
          if (path === dir && !listed) {
            listed = true;
            await writeFile(join(dir, MARKER_FILE), `${JSON.stringify(other.marker)}\n`);
            await writeFile(join(dir, 'README.txt'), 'a file the other node keeps here');
          }
          return readdirBefore(path);
        },
      },
      systemClock,
    );
    const opened = await openDataDir(dir, NODE, NORMALIZATION, mount);
    assert.equal(listed, true, 'the listing was made');
    assert.equal(opened.marker.id, other.marker.id, "the other node's marker");
  });

  test('a file named like the marker that is not one: a clear error', async () => {
    const dir = fresh();
    await mkdir(dir);
    await writeFile(join(dir, MARKER_FILE), 'not json at all');
    await assert.rejects(openDataDir(dir, NODE), isFatal('DATA_DIR_UNUSABLE'));
  });

  test('a directory that cannot be made under one that exists (/proc): DATA_DIR_UNUSABLE, not an endless mkdir', {
    timeout: 10_000,
  }, async (t) => {
    if (
      !(await stat('/proc/self').then(
        () => true,
        () => false,
      ))
    )
      return t.skip('no /proc on this system');
    // Node's recursive mkdir retried ENOENT under /proc forever: the command never returned.
    await assert.rejects(openDataDir('/proc/mountcrawl-nope', NODE), isFatal('DATA_DIR_UNUSABLE'));
    await assert.rejects(openDataDir('/proc/mountcrawl-nope/deeper/still', NODE), isFatal('DATA_DIR_UNUSABLE'));
  });

  test('a path that is a file: DATA_DIR_UNUSABLE', async () => {
    const file = fresh();
    await writeFile(file, 'x');
    await assert.rejects(openDataDir(file, NODE), isFatal('DATA_DIR_UNUSABLE'));
    await assert.rejects(openDataDir(join(file, 'below'), NODE), isFatal('DATA_DIR_UNUSABLE'));
  });

  test('many nodes opening a new directory at once agree on one marker', async () => {
    for (let round = 0; round < 5; round++) {
      const dir = fresh();
      const opened = await Promise.all(Array.from({ length: 12 }, (_, i) => openDataDir(dir, `node-${i}`, NORMALIZATION)));
      const ids = new Set(opened.map((o) => o.marker.id));
      assert.equal(ids.size, 1, `round ${round}: ${[...ids].join(', ')}`);
      assert.equal((await readMarker(new Layout(dir)))?.id, [...ids][0]);
      assert.deepEqual((await readdir(dir)).sort(), [MARKER_FILE, ...Object.values(DIRS)].sort(), 'no temp file left');
    }
  });
});

describe('readMarker', () => {
  test('undefined when there is none', async () => {
    const dir = fresh();
    await mkdir(dir);
    assert.equal(await readMarker(new Layout(dir)), undefined);
  });
});

describe('openExistingDataDir', () => {
  test('opens an existing directory without creating anything', async () => {
    const dir = fresh();
    await mkdir(dir);
    const layout = await openExistingDataDir(dir);
    assert.equal(layout.root, dir);
    assert.deepEqual(await readdir(dir), []);
  });

  test('a missing directory: NO_DATA_DIR, and it is not created', async () => {
    const dir = fresh();
    await assert.rejects(openExistingDataDir(dir), isFatal('NO_DATA_DIR'));
    await assert.rejects(stat(dir), { code: 'ENOENT' });
  });

  test('a file: DATA_DIR_UNUSABLE', async () => {
    const file = fresh();
    await writeFile(file, 'x');
    await assert.rejects(openExistingDataDir(file), isFatal('DATA_DIR_UNUSABLE'));
  });
});
