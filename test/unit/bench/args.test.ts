import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { benchScript, runNode } from '../../support/bench-script.js';

describe('the bench scripts: --help and bad options', () => {
  for (const name of ['read-speed.js', 'scale.js', 'run.js', 'reseed.js']) {
    test(`${name} --help lists its options on stdout and exits 0, running nothing`, async () => {
      const r = await runNode([benchScript(name), '--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^usage: node ${name.replace('.', '\\.')} \\[options\\]`));
      assert.match(r.stdout, /^ {2}--\w[\w-]*( VALUE)?( \(default: [^)]*\))?$/m);
      assert.equal(r.stderr, '');
    });
  }

  test('an unknown option: one line on stderr, exit 2', async () => {
    const r = await runNode([benchScript('read-speed.js'), '--bogus']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "read-speed.js: Unknown option '--bogus'\n");
  });
});
