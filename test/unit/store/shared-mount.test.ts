import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { Leases } from '../../../src/cluster/lease.js';
import { writeFileAtomic } from '../../../src/store/atomic-write.js';
import { createExclusive } from '../../../src/store/exclusive-create.js';
import { Layout } from '../../../src/store/layout.js';
import { readWhole } from '../../../src/store/read-whole.js';
import { readJsonValidated } from '../../../src/store/read-record.js';
import { startSshfsPair } from '../../support/sshfs-pair.js';
import { nodeMount } from '../../../src/store/mount.js';

// The store and lease primitives over two REAL sshfs mounts of one export, each mount acting
// as a separate machine with its own FUSE cache (docs/architecture.md, "Tests"; docs/protocol.md, "What the file system must give"). Skipped, with
// the reason, where sshd/sshfs/FUSE are not available (.ci/run installs them).

const A = 'node-a';
const B = 'node-b';
const now = (): number => performance.now();
const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1] ?? NaN;
const ms = (x: number): string => `${x.toFixed(2)} ms`;

/** Deterministic bytes of a given length, different for each seed. */
function content(seed: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  let block = createHash('sha256').update(String(seed)).digest();
  for (let i = 0; i < length; i += block.length) {
    block.copy(out, i);
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

/** A JSON record whose every byte can be checked: a torn or mixed read fails `checkRecord`. */
interface Rec {
  readonly seq: number;
  readonly len: number;
  readonly pad: string;
  readonly sum: string;
}
function makeRecord(seq: number): string {
  const len = 200 + ((seq * 7919) % 60_000); // 200 B .. 60 KB: versions differ in length
  const pad = String.fromCharCode(97 + (seq % 26)).repeat(len);
  const sum = createHash('sha1').update(`${seq}:${pad}`).digest('hex');
  return JSON.stringify({ seq, len, pad, sum } satisfies Rec);
}
function checkRecord(value: unknown): Rec {
  const r = value as Rec;
  if (typeof r?.seq !== 'number' || typeof r.pad !== 'string' || r.pad.length !== r.len) throw new TypeError('torn');
  if (createHash('sha1').update(`${r.seq}:${r.pad}`).digest('hex') !== r.sum) throw new TypeError('bad sum');
  return r;
}

test('two sshfs mounts of one export behave as the store and leases need', { timeout: 300_000 }, async (t) => {
  const pair = await startSshfsPair(2);
  if ('skip' in pair) {
    t.skip(pair.skip);
    return;
  }
  t.after(() => pair.stop());
  const [m1, m2] = pair.mounts as [string, string];
  t.diagnostic(`mounts: ${m1} ${m2}`);

  await t.test('(a) a file written atomically on mount 1 is whole on mount 2 at once', async () => {
    await mkdir(join(m1, 'a'));
    const times: number[] = [];
    for (let i = 0; i < 40; i++) {
      const data = content(i, 1 + ((i * 37_813) % 300_000));
      const name = `f${i % 4}.bin`; // four names, each replaced ten times with another length
      const t0 = now();
      await writeFileAtomic(nodeMount, join(m1, 'a', name), data, { nodeId: A, fsync: false });
      times.push(now() - t0);
      // No waiting, no retry: the first look from the other mount must see the new version whole.
      assert.ok((await readdir(join(m2, 'a'))).includes(name), `${name} listed on mount 2`);
      assert.equal((await stat(join(m2, 'a', name))).size, data.length, `size of ${name} on mount 2`);
      assert.ok((await readWhole(join(m2, 'a', name))).equals(data), `${name} version ${i} whole on mount 2`);
    }
    assert.deepEqual((await readdir(join(m2, 'a'))).sort(), ['f0.bin', 'f1.bin', 'f2.bin', 'f3.bin']); // no temp left
    t.diagnostic(`writeFileAtomic over sshfs (1 B..300 KB): median ${ms(median(times))}`);
  });

  await t.test('(b) createExclusive raced from both mounts: one winner, the loser gets false', async () => {
    await mkdir(join(m1, 'b'));
    const rounds = 200;
    const loserTimes: number[] = [];
    let wonByA = 0;
    for (let i = 0; i < rounds; i++) {
      const name = `r${i}.lease`;
      const race = (mount: string, node: string) => async () => {
        const t0 = now();
        const won = await createExclusive(nodeMount, join(mount, 'b', name), `${node} ${i}\n`, node);
        return { won, elapsed: now() - t0 };
      };
      const [ra, rb] = await Promise.all([race(m1, A)(), race(m2, B)()]);
      assert.equal(Number(ra.won) + Number(rb.won), 1, `round ${i}: exactly one winner (a: ${ra.won}, b: ${rb.won})`);
      const winner = ra.won ? A : B;
      if (ra.won) wonByA++;
      loserTimes.push(ra.won ? rb.elapsed : ra.elapsed);
      for (const m of [m1, m2]) assert.equal(await readFile(join(m, 'b', name), 'utf8'), `${winner} ${i}\n`);
    }
    const names = await readdir(join(m2, 'b'));
    assert.equal(names.length, rounds, `only the ${rounds} files, no temp file left: ${names.filter((n) => n.startsWith('.'))}`);
    t.diagnostic(`${rounds} races: mount 1 won ${wonByA}, mount 2 won ${rounds - wonByA}`);
    t.diagnostic(`createExclusive, losing call (temp write + link + unlink): median ${ms(median(loserTimes))}`);
  });

  await t.test('(c) lease takeover across mounts: B fails while A lives, takes over once A is dead', async () => {
    const root1 = join(m1, 'c');
    const root2 = join(m2, 'c');
    await mkdir(join(root1, 'hosts'), { recursive: true });
    let aAliveForB = true;
    const leasesA = new Leases(new Layout(root1), A, () => true);
    const leasesB = new Leases(new Layout(root2), B, (id) => (id === A ? aAliveForB : true));
    const host = 'example.com';

    assert.deepEqual(await leasesA.acquire(host), { ok: true });
    assert.deepEqual(await leasesB.acquire(host), { ok: false, holder: A });
    assert.equal((await leasesB.read(host))?.node, A, 'B sees A as the holder');
    assert.deepEqual(await leasesA.verify('all'), [], 'A still holds it');

    aAliveForB = false;
    assert.deepEqual(await leasesB.acquire(host), { ok: true, tookOver: A });
    assert.ok(leasesB.holds(host));
    assert.equal((await leasesA.read(host))?.node, B, 'mount 1 sees the lease of B at once');
    assert.deepEqual(await leasesA.verify('all'), [host], 'A finds the host lost');
    assert.equal(leasesA.holds(host), false);
    assert.deepEqual(await leasesA.acquire(host), { ok: false, holder: B }, 'A cannot take it back while B lives');
    const left = await readdir(join(root2, 'hosts'));
    assert.deepEqual(
      left.filter((n) => !n.includes('~takeover~')),
      [`${host}.lease`],
      'no temp or aside file left',
    );
    assert.equal(left.filter((n) => n.includes('~takeover~')).length, 1, "B's claim on the stale lease, kept while B holds the host");

    await leasesB.release(host);
    assert.deepEqual(await readdir(join(root1, 'hosts')), [], 'released lease (and the claim) gone on mount 1');
  });

  await t.test('(d) readJsonValidated on mount 2 never returns a torn object while mount 1 replaces it', async () => {
    await mkdir(join(m1, 'd'));
    const path1 = join(m1, 'd', 'node.json');
    const path2 = join(m2, 'd', 'node.json');
    await writeFileAtomic(nodeMount, path1, makeRecord(0), { nodeId: A, fsync: false });

    let stop = false;
    let written = 1;
    const writer = (async () => {
      while (!stop) await writeFileAtomic(nodeMount, path1, makeRecord(written++), { nodeId: A, fsync: false });
    })();

    const reads = 2000;
    let distinct = 0;
    let last = -1;
    let naiveTorn = 0;
    let retried = 0; // reads that readJsonValidated found torn and did again
    const countingCheck = (value: unknown): Rec => {
      try {
        return checkRecord(value);
      } catch (err) {
        retried++;
        throw err;
      }
    };
    try {
      for (let i = 0; i < reads; i++) {
        const rec = await readJsonValidated(nodeMount, path2, countingCheck); // throws if it ever gives up
        assert.equal(rec.pad.length, rec.len);
        if (rec.seq !== last) distinct++;
        last = rec.seq;
        // For comparison only: how often a plain readFile of the same file comes back torn.
        if (i % 4 === 0) {
          try {
            checkRecord(JSON.parse(await readFile(path2, 'utf8')));
          } catch {
            naiveTorn++;
          }
        }
      }
    } finally {
      stop = true;
      await writer;
    }
    assert.ok(written > 20, `the writer kept replacing the file (${written} versions)`);
    assert.ok(distinct > 10, `the reader saw many versions (${distinct})`);
    t.diagnostic(
      `${reads} validated reads (${retried} torn and read again), ${distinct} versions seen, ` +
        `${written} written; plain readFile torn ${naiveTorn} of ${reads / 4}`,
    );
  });
});
