import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { type ControlRecord, readControl } from '../../../src/cluster/control-file.js';
import { controlCommand, controlLines } from '../../../src/cli/control-command.js';
import { FatalError } from '../../../src/errors.js';
import { openDataDir } from '../../../src/store/data-dir.js';
import { nodeMount } from '../../../src/store/mount.js';
import { tempDir } from '../../support/cli.js';
import { remoteRecord, writeRecord } from '../../support/node-records.js';

describe('mountcrawl stop, pause, resume, drain (the file they write, what they say)', () => {
  test('pause, resume, drain and stop write the next version of the control file; a stop ends the pause; drains of nodes that left are dropped', async () => {
    const data = await tempDir();
    try {
      const { layout } = await openDataDir(data.path, 'test');
      for (const id of ['a', 'b']) await writeRecord(layout, remoteRecord(id, 1));
      const lines: string[] = [];
      const run = (verb: 'stop' | 'pause' | 'resume' | 'drain', node?: string) =>
        controlCommand(verb, data.path, node, (l) => lines.push(l));
      const control = async (): Promise<ControlRecord> => (await readControl(nodeMount, data.path)) as ControlRecord;

      assert.equal(await run('resume'), 0);
      assert.equal(lines.pop(), 'not paused: nothing to resume');
      assert.equal(await readControl(nodeMount, data.path), 'absent', 'nothing written');

      assert.equal(await run('pause'), 0);
      // Their counters do not move: the command says that no node runs.
      assert.match(
        lines.pop()!,
        /^paused: no node of the crawl runs now; nodes started while paused start paused; mountcrawl resume to go on$/,
      );
      assert.equal((await control()).seq, 1);
      assert.equal((await control()).paused?.seq, 1);
      assert.equal(await run('pause'), 0);
      assert.match(lines.pop()!, /^paused already \(by .+ at .+\): mountcrawl resume to go on$/);
      assert.deepEqual(controlLines(await control(), []), [
        `paused since ${(await control()).paused!.at} (by ${(await control()).paused!.by}): mountcrawl resume to go on`,
      ]);

      assert.equal(await run('drain', 'a'), 0);
      assert.match(lines.pop()!, /^drain a: a is not running \(its heartbeat did not move\)/);
      assert.deepEqual(
        (await control()).drain.map((d) => [d.node, d.seq]),
        [['a', 2]],
      );
      assert.ok((await control()).paused !== undefined, 'a drain leaves the pause in force');

      await rm(layout.node('a'));
      assert.equal(await run('stop'), 0);
      const stopped = await control();
      assert.equal(stopped.seq, 3);
      assert.equal(stopped.stop?.seq, 3);
      assert.equal(stopped.paused, undefined, 'a stop ends the pause');
      assert.deepEqual(stopped.drain, [], "a's drain went with its record");
    } finally {
      await data.cleanup();
    }
  });

  test('bad input: an unknown node is UNKNOWN_NODE, exit 2, naming the nodes; a directory with no crawl is NO_CRAWL', async () => {
    const data = await tempDir();
    try {
      const { layout } = await openDataDir(data.path, 'test');
      await writeRecord(layout, remoteRecord('b', 1));
      await writeRecord(layout, remoteRecord('a', 1, { state: 'done' }));
      const refused = async (node: string): Promise<FatalError> => {
        try {
          await controlCommand('drain', data.path, node, () => undefined);
        } catch (err) {
          return err as FatalError;
        }
        assert.fail('not refused');
      };
      const unknown = await refused('zz');
      assert.equal(unknown.code, 'UNKNOWN_NODE');
      assert.equal(unknown.exitCode, 2);
      assert.equal(unknown.message, `no node zz in ${data.path}/nodes (its nodes: b)`);
      assert.equal((await refused('a')).message, 'a has left the crawl already (done) (its nodes: b)');
      assert.equal(await readControl(nodeMount, data.path), 'absent', 'nothing written');
    } finally {
      await data.cleanup();
    }
    const empty = await tempDir();
    try {
      await assert.rejects(
        controlCommand('stop', empty.path, undefined, () => undefined),
        { code: 'NO_CRAWL', exitCode: 2 },
      );
    } finally {
      await empty.cleanup();
    }
  });
});
