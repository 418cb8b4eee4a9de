import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { SSHFS_PAIR_SCRIPT, startSshfsPair } from '../support/sshfs-pair.js';

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// mount-example/sshfs-pair.sh: SSHFS_PAIR_ADDRESS binds its sshd to another address (mount-example/README.md).
describe('sshfs-pair.sh: the address sshd listens on', { timeout: 90_000 }, () => {
  test('SSHFS_PAIR_ADDRESS: sshd listens there only, and the mounts reach the export through it', async (t) => {
    const pair = await startSshfsPair(1, { address: '127.0.0.7' });
    if ('skip' in pair) return t.skip(pair.skip);
    t.after(() => pair.stop());
    const port = Number((await readFile(join(dirname(pair.export), 'port'), 'utf8')).trim());
    assert.equal(await accepts('127.0.0.7', port), true);
    assert.equal(await accepts('127.0.0.1', port), false, 'the default address is not bound');
    assert.equal((await readFile(join(pair.mounts[0]!, '.sshfs-pair'), 'utf8')).trim(), 'sshfs-pair export');
  });

  test('an address that is no IP address: one line, exit 1, nothing started', async () => {
    const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        'bash',
        [SSHFS_PAIR_SCRIPT, 'start', '/nonexistent/sshfs-pair-never-made', '1'],
        { env: { ...process.env, SSHFS_PAIR_ADDRESS: 'not an address' } },
        (err, _stdout, stderr) => resolve({ code: typeof err?.code === 'number' ? err.code : 0, stderr }),
      );
    });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, "sshfs-pair: SSHFS_PAIR_ADDRESS must be an IP address (127.0.0.1, 0.0.0.0, ::1), not 'not an address'\n");
  });
});
