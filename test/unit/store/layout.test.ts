import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DIRS, Layout, MARKER_FILE, takeoverClaimPath } from '../../../src/store/layout.js';
import { Mount } from '../../../src/store/mount.js';
import { nodeMountFs } from '../../../src/store/node-mount-fs.js';
import { tempName, tempOwner } from '../../../src/store/temp-names.js';
import { FakeClock } from '../../support/fake-clock.js';

const KEY = '599370d5687c3fd078c314add6d37c2d714e57a5d9157d4a703cfcc0';

describe('Layout: where everything lives (docs/protocol.md)', () => {
  const root = join('/', 'data', 'crawl');
  const layout = new Layout(root);

  test('per-host records', () => {
    assert.equal(layout.html('example.com', KEY), join(root, 'html', 'example.com', `${KEY}.html`));
    assert.equal(layout.links('example.com_8080', KEY), join(root, 'links', 'example.com_8080', `${KEY}.json`));
    assert.equal(layout.errs('[--1]_8080', KEY), join(root, 'errs', '[--1]_8080', `${KEY}.json`));
    assert.equal(layout.hostDir('links', 'example.com'), join(root, 'links', 'example.com'));
  });

  test('seeds, leases, nodes, robots and the marker', () => {
    assert.equal(layout.seed(KEY), join(root, 'seeds', `${KEY}.url`));
    assert.equal(layout.lease('example.com'), join(root, 'hosts', 'example.com.lease'));
    assert.equal(layout.node('ws1-1234'), join(root, 'nodes', 'ws1-1234.json'));
    assert.equal(layout.robots('example.com_8080'), join(root, 'robots', 'example.com_8080.txt'));
    assert.equal(layout.marker(), join(root, MARKER_FILE));
    assert.equal(MARKER_FILE, '.mountcrawl');
  });

  test('top-level directories', () => {
    assert.deepEqual(Object.keys(DIRS).sort(), ['errs', 'files', 'handoff', 'hosts', 'html', 'links', 'nodes', 'robots', 'seeds']);
    for (const name of Object.keys(DIRS) as (keyof typeof DIRS)[]) assert.equal(layout.dir(name), join(root, name));
    assert.ok(Object.isFrozen(DIRS));
  });

  test('html paths cited in links records are relative, with forward slashes', () => {
    assert.equal(layout.relativeHtml('example.com', KEY), `html/example.com/${KEY}.html`);
  });
});

describe('tempName and tempOwner', () => {
  test('a temporary name is hidden and names its writer, the tag of its Mount and a sequence number', () => {
    assert.equal(tempName(`${KEY}.json`, 'ws1-1234', 'abc123', 35), `.${KEY}.json~ws1-1234~abc123z.tmp`);
    assert.equal(tempName('example.com.lease', 'n', '000000', 0), '.example.com.lease~n~0000000.tmp');
  });

  test('the same node id and sequence in another process gives another name', () => {
    // A killed run with the same --node-id may have left its temp file: a new run must not collide.
    const here = new Mount(nodeMountFs, new FakeClock()).nextTempName('x.json', 'n1');
    const module = new URL('../../../src/store/mount.js', import.meta.url).href;
    const there = execFileSync(process.execPath, [
      '--input-type=module',
      '-e',
      `import { nodeMount } from ${JSON.stringify(module)}; process.stdout.write(nodeMount.nextTempName('x.json', 'n1'));`,
    ]).toString();
    assert.match(there, /^\.x\.json~n1~[0-9a-z]{7}\.tmp$/);
    assert.notEqual(there, here);
  });

  test('round trip: tempOwner gives back the node id, with dots, dashes and underscores', () => {
    const ids = ['ws1-1234', 'ws1.example.org-1234', 'a.b.c', '-x-', 'node_7', 'x.y-z_1.2', 'x'.repeat(64)];
    const finals = [`${KEY}.json`, `${KEY}.html`, 'example.com.lease', 'example.com_8080.txt', 'ws1-1234.json'];
    for (const id of ids) {
      for (const final of finals) {
        for (const seq of [0, 1, 36, 1_000_000]) {
          const name = tempName(final, id, 'q0q0q0', seq);
          assert.ok(name.startsWith('.'), name);
          assert.equal(tempOwner(name), id, name);
        }
      }
    }
  });

  test('names that are not temporary files have no owner', () => {
    const notTemp = [
      `${KEY}.json`, // a final name
      `${KEY}.json~ws1~0.tmp`, // not hidden
      `.${KEY}.json~ws1~0`, // no .tmp
      `.${KEY}.json~~0.tmp`, // no node id
      `.${KEY}.json~ws1.tmp`, // no sequence
      `.${KEY}.json~ws1~0~1.tmp`, // too many parts
      `.${KEY}.json~ws 1~0.tmp`, // a node id cannot hold a space
      `.${KEY}.json~ws1~Z.tmp`, // sequence is lowercase base 36
      '.mountcrawl',
      '',
    ];
    for (const name of notTemp) assert.equal(tempOwner(name), undefined, name);
  });
});

describe('Mount.nextTempName, Mount.nextTempPath and takeoverClaimPath', () => {
  test('one sequence for every writer through a Mount: never the same name twice, whichever file it is for', () => {
    const mount = new Mount(nodeMountFs, new FakeClock());
    const names = [mount.nextTempName('x.json', 'n1'), mount.nextTempName('x.json', 'n1'), mount.nextTempName('x.json', 'n1')];
    const inDir = mount.nextTempPath('/data/links/h/x.json', 'n1');
    assert.equal(inDir.slice(0, '/data/links/h/'.length), '/data/links/h/');
    names.push(inDir.slice('/data/links/h/'.length));
    assert.equal(new Set(names).size, 4);
    for (const name of names) {
      assert.match(name, /^\.x\.json~n1~[0-9a-z]{7,}\.tmp$/);
      assert.equal(tempOwner(name), 'n1');
    }
  });

  test('a Mount with a random source (a test, a simulation) names the same way in every run, and a node made again later names otherwise', () => {
    const clock = new FakeClock();
    const random = (): number => 0.5;
    const first = new Mount(nodeMountFs, clock, random).nextTempName('x.json', 'n1');
    assert.equal(new Mount(nodeMountFs, clock, random).nextTempName('x.json', 'n1'), first);
    clock.advance(1);
    assert.notEqual(new Mount(nodeMountFs, clock, random).nextTempName('x.json', 'n1'), first);
  });

  test('the takeover claim of a lease: one name for every node, as docs/protocol.md spells it', () => {
    assert.equal(takeoverClaimPath('/d/hosts/example.com.lease', 'ab-12'), '/d/hosts/.example.com.lease.ab-12~takeover~0.tmp');
    assert.equal(
      takeoverClaimPath('/d/hosts/h.lease', 'a/b c_d'),
      '/d/hosts/.h.lease.abcd~takeover~0.tmp',
      'only letters, digits and dashes',
    );
    assert.equal(tempOwner('.h.lease.abcd~takeover~0.tmp'), 'takeover', 'a temporary name: the sweeper removes it');
  });
});

describe('Layout: kept files (--keep)', () => {
  test('files/<host>/<key>.<ext>, cited relative in links records', () => {
    const layout = new Layout('/data');
    const key = 'a'.repeat(56);
    assert.equal(layout.file('example.com', key, 'pdf'), `/data/files/example.com/${key}.pdf`);
    assert.equal(layout.relativeFile('example.com', key, 'pdf'), `files/example.com/${key}.pdf`);
  });
});
