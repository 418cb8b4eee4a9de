import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MountServer } from '../../../src/sim/mount-server.js';
import { MountView, type MountObserver, type MountWeather, type MountViewOptions } from '../../../src/sim/mount-view.js';
import { Random } from '../../../src/sim/random.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { Trace } from '../../../src/sim/trace.js';

const calm: MountWeather = { eio: () => false, enospc: () => false, stallEnd: () => undefined };

function rig(opts: Partial<MountViewOptions> = {}, weather: MountWeather = calm, mutation = {}, observe?: MountObserver) {
  const sched = new Scheduler();
  const server = new MountServer('/d', () => 1000 + sched.now, mutation);
  const trace = new Trace('/d', true);
  const view = (node: string, o: Partial<MountViewOptions> = {}) =>
    new MountView({ server, sched, rng: new Random(1), weather, trace, ...(observe ? { observe } : {}) }, node, `${node}.1`, {
      sshfs: false,
      cacheMs: 0,
      tornReads: false,
      ...opts,
      ...o,
    });
  const settled = async <T>(p: Promise<T>): Promise<{ value?: T; code?: string }> => {
    let out: { value?: T; code?: string } | undefined;
    p.then(
      (value) => (out = { value }),
      (err: NodeJS.ErrnoException) => (out = { code: err.code ?? 'error' }),
    );
    await sched.run(Infinity, () => out !== undefined);
    return out ?? {};
  };
  return { sched, server, trace, view, settled };
}

describe('simulated mount', () => {
  test('link grants a name once: EEXIST, or EPERM as over sshfs; rename replaces atomically', async () => {
    const { view, settled } = rig();
    const a = view('a');
    const b = view('b', { sshfs: true });
    await settled(a.writeNew('/d/t1', 'one'));
    await settled(a.writeNew('/d/t2', 'two'));
    assert.deepEqual(await settled(a.link('/d/t1', '/d/lease')), { value: undefined });
    assert.equal((await settled(a.link('/d/t2', '/d/lease'))).code, 'EEXIST');
    assert.equal((await settled(b.link('/d/t2', '/d/lease'))).code, 'EPERM');
    assert.equal((await settled(a.writeNew('/d/t1', 'again'))).code, 'EEXIST');
    await settled(b.rename('/d/t2', '/d/lease'));
    assert.equal(String((await settled(a.readFile('/d/lease'))).value), 'two');
    assert.deepEqual((await settled(a.readdir('/d'))).value, ['t1', 'lease']);
  });

  test('the mutation that breaks exclusive create lets a second link win', async () => {
    const { view, settled } = rig({}, calm, { linkReplaces: true });
    const a = view('a');
    await settled(a.writeNew('/d/t1', 'one'));
    await settled(a.writeNew('/d/t2', 'two'));
    await settled(a.link('/d/t1', '/d/lease'));
    assert.deepEqual(await settled(a.link('/d/t2', '/d/lease')), { value: undefined });
  });

  test("a listing from a node's cache lags behind another node's create until the cache time passes", async () => {
    const { view, settled, sched } = rig({ cacheMs: 300 });
    const a = view('a');
    const b = view('b');
    assert.deepEqual((await settled(b.readdir('/d'))).value, []);
    await settled(a.writeNew('/d/x', 'x'));
    assert.deepEqual((await settled(b.readdir('/d'))).value, []);
    sched.after(400, () => undefined);
    await sched.run(Infinity, () => false);
    assert.deepEqual((await settled(b.readdir('/d'))).value, ['x']);
  });

  test('a killed process never hears of an operation the server made; a paused one hears when it resumes', async () => {
    const { view, sched, server } = rig();
    const a = view('a');
    let heard = false;
    void a.writeNew('/d/f', 'data').then(() => (heard = true));
    sched.kill('a.1');
    await sched.run(Infinity, () => false);
    assert.equal(heard, false);
    assert.equal(String(server.readFile('/d/f').data), 'data');
    const b = view('b');
    void b.unlink('/d/f').then(() => (heard = true));
    sched.pause('b.1');
    sched.after(1000, () => sched.resume('b.1'));
    await sched.run(999, () => false);
    assert.equal(heard, false);
    await sched.run(Infinity, () => false);
    assert.equal(heard, true);
    assert.equal(server.lookup('/d/f'), undefined);
  });

  test('EIO may come after the server made the change; a full disk leaves part of a new file', async () => {
    const weather: MountWeather = { eio: () => true, enospc: () => false, stallEnd: () => undefined };
    const { view, settled, server } = rig({}, weather);
    const a = view('a');
    let made = 0;
    for (let i = 0; i < 20; i++) {
      assert.equal((await settled(a.mkdir(`/d/x${i}`))).code, 'EIO');
      if (server.lookup(`/d/x${i}`) !== undefined) made++;
    }
    assert.ok(made > 0 && made < 20, `${made} of 20 made`);
    const full = rig({}, { eio: () => false, enospc: () => true, stallEnd: () => undefined });
    assert.equal((await full.settled(full.view('a').writeNew('/d/big', 'x'.repeat(100)))).code, 'ENOSPC');
    assert.ok(full.server.readFile('/d/big').data.length <= 100);
  });

  test('a file replaced by a shorter one during a read may come back cut at the new size, never otherwise', async () => {
    let replace = (): void => undefined;
    const { view, settled, server } = rig({ tornReads: true }, calm, {}, (_p, call) => {
      if (call === 'read') replace();
    });
    const a = view('a');
    const long = Buffer.from('a much longer content');
    let torn = 0;
    for (let i = 0; i < 20; i++) {
      server.writeNew('/d/r', long);
      replace = () => {
        server.writeNew('/d/t', Buffer.from('short'));
        server.rename('/d/t', '/d/r');
      };
      const got = String((await settled(a.readFile('/d/r'))).value);
      assert.ok(got === long.toString() || got === long.toString().slice(0, 5), got);
      if (got.length === 5) torn++;
      server.unlink('/d/r');
    }
    assert.ok(torn > 0 && torn < 20, `${torn} of 20 torn`);
    replace = () => undefined;
    server.writeNew('/d/r', long);
    assert.equal(String((await settled(a.readFile('/d/r'))).value), long.toString());
  });
});
