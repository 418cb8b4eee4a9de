import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attemptsAfterFailure, attemptsLeft, isFinal, nextRetryDelay, type RetryRules } from '../../../src/frontier/retry-policy.js';

const RULES: RetryRules = { maxAttempts: 5, retryBaseMs: 1_000, retryMaxMs: 10_000 };

test('backoff doubles after each failed attempt: base * 2^(attempts-1)', () => {
  assert.equal(nextRetryDelay(1, RULES), 1_000);
  assert.equal(nextRetryDelay(2, RULES), 2_000);
  assert.equal(nextRetryDelay(3, RULES), 4_000);
  assert.equal(nextRetryDelay(4, RULES), 8_000);
});

test('backoff is capped at retryMaxMs', () => {
  const rules: RetryRules = { maxAttempts: 100, retryBaseMs: 1_000, retryMaxMs: 10_000 };
  assert.equal(nextRetryDelay(5, rules), 10_000);
  assert.equal(nextRetryDelay(60, rules), 10_000);
});

test('once attempts reach maxAttempts the failure is final (undefined)', () => {
  assert.equal(nextRetryDelay(5, RULES), undefined);
  assert.equal(nextRetryDelay(6, RULES), undefined);
  assert.equal(nextRetryDelay(1, { ...RULES, maxAttempts: 1 }), undefined);
});

test('a longer Retry-After wins over the backoff, itself capped at retryMaxMs', () => {
  assert.equal(nextRetryDelay(1, RULES, 5_000), 5_000);
  assert.equal(nextRetryDelay(1, RULES, 3_600_000), 10_000);
});

test('a shorter Retry-After does not shorten the backoff', () => {
  assert.equal(nextRetryDelay(3, RULES, 500), 4_000);
  assert.equal(nextRetryDelay(3, RULES, 0), 4_000);
});

test('Retry-After does not make a final failure retryable', () => {
  assert.equal(nextRetryDelay(5, RULES, 1_000), undefined);
});

test('attempt 0 (nothing failed yet) waits the base', () => {
  assert.equal(nextRetryDelay(0, RULES), 1_000);
});

test('attemptsLeft: the limit less the attempts so far; 0 when written final, whatever the limit', () => {
  assert.equal(attemptsLeft({ final: false, attempts: 1 }, 3), 2);
  assert.equal(attemptsLeft({ final: false, attempts: 2 }, 3), 1);
  assert.equal(attemptsLeft({ final: false, attempts: 3 }, 3), 0);
  assert.equal(attemptsLeft({ final: true, attempts: 1 }, 10), 0, 'a final record is not reopened by a higher limit');
});

test('isFinal: a record not final when written is final under a limit lowered to (or below) its attempts', () => {
  const rec = { final: false, attempts: 2 };
  assert.equal(isFinal(rec, 3), false);
  assert.equal(isFinal(rec, 2), true);
  assert.equal(isFinal(rec, 1), true);
  assert.equal(isFinal({ final: true, attempts: 1 }, 3), true);
});

test('nextRetryDelay gives up exactly when the record it writes would be final under the same limit', () => {
  for (let attempts = 1; attempts <= 6; attempts++) {
    assert.equal(
      nextRetryDelay(attempts, RULES) === undefined,
      isFinal({ final: false, attempts }, RULES.maxAttempts),
      `attempts ${attempts}`,
    );
  }
});

test('attemptsAfterFailure: one more than the record before, 1 without one', () => {
  assert.equal(attemptsAfterFailure(undefined), 1);
  assert.equal(attemptsAfterFailure({ final: false, attempts: 2 }), 3);
});
