import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  defaultNodeId,
  parseChoice,
  parseNodeId,
  parseRegex,
  parseSeconds,
  parseSize,
  parseWhole,
} from '../../../src/config/parse-values.js';
import { ExitCode, FatalError } from '../../../src/errors.js';

/** Asserts that `fn` throws the one-line BAD_OPTION usage error naming the flag and the value. */
function assertBadOption(fn: () => unknown, flag: string, raw: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof FatalError);
    assert.equal(err.code, 'BAD_OPTION');
    assert.equal(err.exitCode, ExitCode.USAGE);
    assert.ok(err.message.startsWith(flag), err.message);
    assert.ok(err.message.includes(JSON.stringify(raw)), err.message);
    assert.ok(!err.message.includes('\n'), 'one line');
    return true;
  });
}

describe('parseWhole', () => {
  test('whole numbers at or above the minimum', () => {
    assert.equal(parseWhole('--n', '0', 0), 0);
    assert.equal(parseWhole('--n', '5', 1), 5);
    assert.equal(parseWhole('--n', ' 42 ', 1), 42);
    assert.equal(parseWhole('--n', '007', 1), 7);
    assert.equal(parseWhole('--n', String(Number.MAX_SAFE_INTEGER), 1), Number.MAX_SAFE_INTEGER);
  });

  test('below the minimum, negative, fractional, exponent, empty or too large: BAD_OPTION', () => {
    for (const raw of ['0', '-1', '1.5', '1e3', '', ' ', 'ten', '0x10', '99999999999999999999']) {
      assertBadOption(() => parseWhole('--max-pages', raw, 1), '--max-pages', raw);
    }
  });

  test("'unlimited' and its synonyms give Infinity only when allowed", () => {
    for (const raw of ['inf', 'Infinity', 'UNLIMITED', 'none', ' unlimited ']) {
      assert.equal(parseWhole('--max-depth', raw, 0, true), Infinity, raw);
    }
    assertBadOption(() => parseWhole('--concurrency', 'unlimited', 1), '--concurrency', 'unlimited');
  });
});

describe('parseSeconds', () => {
  test('seconds, whole or decimal, in milliseconds', () => {
    assert.equal(parseSeconds('--timeout', '2'), 2_000);
    assert.equal(parseSeconds('--timeout', '0.5'), 500);
    assert.equal(parseSeconds('--timeout', ' 30 '), 30_000);
    assert.equal(parseSeconds('--timeout', '0.0015'), 2, 'rounded to the millisecond');
  });

  test('zero only when allowed', () => {
    assert.equal(parseSeconds('--retry-delay', '0', true), 0);
    assertBadOption(() => parseSeconds('--timeout', '0'), '--timeout', '0');
  });

  test('a value that rounds to 0 ms is zero', () => {
    assertBadOption(() => parseSeconds('--timeout', '0.0001'), '--timeout', '0.0001');
    assert.equal(parseSeconds('--retry-delay', '0.0001', true), 0);
  });

  test('longer than a timer can wait (about 24.8 days): BAD_OPTION', () => {
    assert.equal(parseSeconds('--timeout', '2147483'), 2_147_483_000);
    assertBadOption(() => parseSeconds('--timeout', '2147484'), '--timeout', '2147484');
    assertBadOption(() => parseSeconds('--timeout', '1e300'), '--timeout', '1e300');
  });

  test('negative, empty, infinite or not a number: BAD_OPTION', () => {
    for (const raw of ['-1', '', 'soon', 'Infinity', 'NaN', '5s']) {
      assertBadOption(() => parseSeconds('--timeout', raw, true), '--timeout', raw);
    }
  });
});

describe('parseSize', () => {
  test('plain bytes and units: k, m, g binary; kb, mb, gb decimal; kib, mib, gib binary', () => {
    const cases: readonly (readonly [string, number])[] = [
      ['1048576', 1_048_576],
      ['100b', 100],
      ['512k', 512 * 1024],
      ['512K', 512 * 1024],
      ['1kb', 1_000],
      ['1KiB', 1_024],
      ['10MiB', 10 * 1024 ** 2],
      ['10m', 10 * 1024 ** 2],
      ['10MB', 10_000_000],
      ['1GB', 1_000_000_000],
      ['1g', 1024 ** 3],
      ['2GiB', 2 * 1024 ** 3],
      ['1.5k', 1_536],
      [' 64 kib ', 65_536],
    ];
    for (const [raw, bytes] of cases) assert.equal(parseSize('--max-bytes', raw), bytes, raw);
  });

  test('a fraction of a byte is rounded down', () => {
    assert.equal(parseSize('--max-bytes', '1.9'), 1);
  });

  test('zero, less than one byte, unknown units and junk: BAD_OPTION', () => {
    for (const raw of ['0', '0k', '0.5', '0.0001k', '-1', '10 TB', '10x', 'k', '', '1e6', '1,000']) {
      assertBadOption(() => parseSize('--max-bytes', raw), '--max-bytes', raw);
    }
  });
});

describe('parseRegex', () => {
  test('a JavaScript regular expression', () => {
    const re = parseRegex('--include', '^https://example\\.com/docs/');
    assert.ok(re.test('https://example.com/docs/a'));
    assert.ok(!re.test('https://example.com/blog/a'));
  });

  test('an invalid one: BAD_OPTION with the reason', () => {
    assertBadOption(() => parseRegex('--exclude', '(unclosed'), '--exclude', '(unclosed');
  });
});

describe('parseChoice', () => {
  test('one of the words, exactly', () => {
    assert.equal(parseChoice('--scope', 'domain', ['host', 'domain', 'any']), 'domain');
    assertBadOption(() => parseChoice('--scope', 'Domain', ['host', 'domain', 'any']), '--scope', 'Domain');
    assertBadOption(() => parseChoice('--scope', 'world', ['host', 'domain', 'any']), '--scope', 'world');
  });
});

describe('parseNodeId', () => {
  test('letters, digits, dot, underscore and dash, up to 64 characters', () => {
    for (const id of ['node1', 'ws1.example.org-1234', 'a_b-c.d', '-leading-dash', 'x'.repeat(64)]) {
      assert.equal(parseNodeId('--node-id', id), id);
    }
  });

  test('a leading dot, a ~, a slash, spaces, empty or too long: BAD_OPTION', () => {
    // `~` separates the parts of temporary file names; `.` first would hide the heartbeat file.
    for (const id of ['', '.hidden', 'a~b', 'a/b', '..', 'a b', 'ü', 'x'.repeat(65)]) {
      assertBadOption(() => parseNodeId('--node-id', id), '--node-id', id);
    }
  });
});

describe('defaultNodeId', () => {
  test('host name and pid', () => {
    assert.equal(defaultNodeId('ws1.example.org', 1234), 'ws1.example.org-1234');
  });

  test('characters a file name should not carry become -, leading dots go', () => {
    assert.equal(defaultNodeId('my host/ü', 7), 'my-host---7'); // space, / and ü
    assert.equal(defaultNodeId('..hidden', 7), 'hidden-7');
    assert.equal(defaultNodeId('...', 7), 'node-7');
    assert.equal(defaultNodeId('', 7), 'node-7');
  });

  test('a long host name is cut so that the id stays a valid node id', () => {
    const id = defaultNodeId('h'.repeat(200), 4_194_304);
    assert.equal(id, `${'h'.repeat(48)}-4194304`);
    assert.equal(parseNodeId('--node-id', id), id);
  });

  test('whatever the host name, the result passes parseNodeId', () => {
    for (const host of ['ws1', 'a b c', '.x', '~weird~', 'ü'.repeat(100), '']) {
      const id = defaultNodeId(host, 99);
      assert.equal(parseNodeId('--node-id', id), id, host);
    }
  });
});
