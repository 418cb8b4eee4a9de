import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FetchFailure } from '../../../src/errors.js';
import { classifyFetchError, isTransientStatus } from '../../../src/fetch/classify-error.js';

/** An error as Node or undici throws it: a message and a `code`. */
function coded(code: string, message = `failed with ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

describe('classifyFetchError: codes and whether a retry can help', () => {
  const table: readonly (readonly [string, string, 'transient' | 'final'])[] = [
    ['UND_ERR_CONNECT_TIMEOUT', 'CONNECT_TIMEOUT', 'transient'],
    ['UND_ERR_HEADERS_TIMEOUT', 'FETCH_TIMEOUT', 'transient'],
    ['UND_ERR_BODY_TIMEOUT', 'FETCH_TIMEOUT', 'transient'],
    ['ETIMEDOUT', 'FETCH_TIMEOUT', 'transient'],
    ['ECONNREFUSED', 'CONNECTION_REFUSED', 'transient'],
    ['ECONNRESET', 'CONNECTION_RESET', 'transient'],
    ['EPIPE', 'CONNECTION_RESET', 'transient'],
    ['UND_ERR_SOCKET', 'CONNECTION_RESET', 'transient'],
    ['UND_ERR_CLOSED', 'CONNECTION_RESET', 'transient'],
    ['ENOTFOUND', 'DNS_NO_SUCH_HOST', 'final'],
    ['EAI_AGAIN', 'DNS_FAILED', 'transient'],
    ['EAI_FAIL', 'DNS_FAILED', 'transient'],
    ['EAI_NONAME', 'DNS_NO_SUCH_HOST', 'final'],
    ['EAI_NODATA', 'DNS_NO_SUCH_HOST', 'final'],
    ['EHOSTUNREACH', 'HOST_UNREACHABLE', 'transient'],
    ['ENETUNREACH', 'HOST_UNREACHABLE', 'transient'],
    ['EHOSTDOWN', 'HOST_UNREACHABLE', 'transient'],
    ['ENETDOWN', 'HOST_UNREACHABLE', 'transient'],
    ['UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'BAD_RESPONSE', 'transient'],
    ['UND_ERR_RES_EXCEEDED_MAX_SIZE', 'BAD_RESPONSE', 'transient'],
    ['HPE_INVALID_CONSTANT', 'BAD_RESPONSE', 'transient'],
    ['UND_ERR_INFO', 'BAD_RESPONSE', 'transient'],
    ['EPRIVATE', 'PRIVATE_ADDRESS', 'final'],
    ['Z_DATA_ERROR', 'DECODE_FAILED', 'final'],
    ['Z_BUF_ERROR', 'DECODE_FAILED', 'final'],
    ['ERR__ERROR_FORMAT_PADDING_1', 'DECODE_FAILED', 'final'],
    ['ERR_BROTLI_DECOMPRESSION_FAILED', 'DECODE_FAILED', 'final'],
    ['CERT_HAS_EXPIRED', 'TLS_ERROR', 'final'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'TLS_ERROR', 'final'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'TLS_ERROR', 'final'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'TLS_ERROR', 'final'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'TLS_ERROR', 'final'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'TLS_ERROR', 'final'],
    ['ERR_TLS_HANDSHAKE_TIMEOUT', 'TLS_ERROR', 'final'],
    ['EPROTO', 'TLS_ERROR', 'final'],
    ['ESOMETHINGNEW', 'FETCH_FAILED', 'transient'],
  ];
  for (const [given, code, kind] of table) {
    test(`${given} -> ${code} (${kind})`, () => {
      const err = coded(given);
      const f = classifyFetchError(err, false);
      assert.ok(f instanceof FetchFailure);
      assert.equal(f.code, code);
      assert.equal(f.kind, kind);
      assert.equal(f.cause, err, 'the original error is kept as the cause');
      assert.match(f.message, new RegExp(given), 'the message names what happened');
    });
  }
});

describe('classifyFetchError: special cases', () => {
  test('a FetchFailure passes through unchanged', () => {
    const original = new FetchFailure('UNSUPPORTED_ENCODING', 'final', 'unsupported Content-Encoding: zstd');
    assert.equal(classifyFetchError(original, false), original);
    assert.equal(classifyFetchError(original, true), original, 'even after the deadline');
  });

  test('our own deadline wins over whatever the abort looked like', () => {
    const f = classifyFetchError(coded('UND_ERR_ABORTED', 'This operation was aborted'), true);
    assert.equal(f.code, 'FETCH_TIMEOUT');
    assert.equal(f.kind, 'transient');
    assert.equal(f.message, 'total deadline passed');
  });

  test('a code on the cause is used when the error itself has none (fetch-style wrapping)', () => {
    const wrapped = new TypeError('fetch failed', { cause: coded('ECONNREFUSED') });
    const f = classifyFetchError(wrapped, false);
    assert.equal(f.code, 'CONNECTION_REFUSED');
    assert.equal(f.kind, 'transient');
  });

  test('the error own code comes before the cause code', () => {
    const err = Object.assign(new Error('x', { cause: coded('ECONNREFUSED') }), { code: 'EPRIVATE' });
    assert.equal(classifyFetchError(err, false).code, 'PRIVATE_ADDRESS');
  });

  test('values that are not errors still give a FetchFailure', () => {
    for (const thrown of ['a string', undefined, null, 42, {}]) {
      const f = classifyFetchError(thrown, false);
      assert.ok(f instanceof FetchFailure);
      assert.equal(f.code, 'FETCH_FAILED');
      assert.equal(f.kind, 'transient');
    }
  });
});

test('isTransientStatus: 408, 425, 429 and every 5xx are transient; other failure statuses are final', () => {
  for (const s of [408, 425, 429, 500, 502, 503, 504, 599]) assert.equal(isTransientStatus(s), true, String(s));
  for (const s of [400, 401, 403, 404, 410, 451, 600, 304]) assert.equal(isTransientStatus(s), false, String(s));
});
