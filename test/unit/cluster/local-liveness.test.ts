import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { describe, test } from 'node:test';
import { bootId, isDeadLocalProcess, processRunning } from '../../../src/cluster/local-liveness.js';
import { exitedPid } from '../../support/processes.js';

const haveProc = bootId() !== '';

describe('bootId', () => {
  test('names this boot and this PID namespace, the same at every call', { skip: !haveProc && 'no /proc' }, async () => {
    const boot = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
    const id = bootId();
    assert.ok(id.startsWith(`${boot}/`), id);
    assert.match(id.slice(boot.length + 1), /^pid:\[\d+\]$/);
    assert.equal(bootId(), id);
  });
});

describe('processRunning', () => {
  test('true for this process and its parent', { skip: !haveProc && 'no /proc' }, () => {
    assert.equal(processRunning(process.pid), true);
    assert.equal(processRunning(process.ppid), true);
  });

  test('false for a process that exited, and for a pid that cannot exist', async () => {
    assert.equal(processRunning(await exitedPid()), false);
    assert.equal(processRunning(2 ** 31 - 1), false);
  });

  test('false for a zombie (exited, not yet reaped by its parent)', { skip: !haveProc && 'no /proc' }, async (t) => {
    // sh starts a short-lived child, prints its pid, then becomes `sleep`, which never reaps it.
    const sh = spawn('/bin/sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    t.after(() => {
      sh.kill('SIGKILL');
    });
    const [line] = (await once(sh.stdout!, 'data')) as [Buffer];
    const zombie = Number(line.toString().trim());
    assert.ok(Number.isInteger(zombie) && zombie > 0);
    // Wait (without a deadline: the test runner's own timeout applies) until it has exited.
    let state = '';
    while (state !== 'Z') {
      const stat = await readFile(`/proc/${zombie}/stat`, 'utf8');
      state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z') await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(processRunning(zombie), false);
    assert.equal(processRunning(sh.pid!), true, 'its parent runs');
  });
});

describe('isDeadLocalProcess', () => {
  test('true only for a record of this machine and boot whose pid does not run', { skip: !haveProc && 'no /proc' }, async () => {
    const dead = await exitedPid();
    const here = { hostname: hostname(), bootId: bootId() };
    assert.equal(isDeadLocalProcess({ ...here, pid: dead }), true);
    assert.equal(isDeadLocalProcess({ ...here, pid: process.ppid }), false, 'running');
    assert.equal(isDeadLocalProcess({ ...here, pid: process.pid }), false, 'this very process');
    assert.equal(isDeadLocalProcess({ ...here, hostname: `${hostname()}x`, pid: dead }), false, 'another machine');
    assert.equal(isDeadLocalProcess({ ...here, bootId: 'another-boot/pid:[1]', pid: dead }), false, 'an earlier boot');
    assert.equal(isDeadLocalProcess({ ...here, bootId: '', pid: dead }), false, 'no boot id: in doubt');
  });
});
