import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CrawlConfig } from '../../../src/config/crawl-config.js';
import { reconcileNormalization } from '../../../src/crawl/normalization.js';
import { ExitCode, FatalError } from '../../../src/errors.js';
import type { Marker } from '../../../src/store/data-dir.js';
import { DEFAULT_NORMALIZE_OPTIONS, NORMALIZATION_VERSION, type NormalizeOptions } from '../../../src/url/normalize.js';

const marker = (normalization?: Marker['normalization']): Marker => ({
  format: 'mountcrawl',
  version: 1,
  id: '00000000-0000-4000-8000-000000000000',
  createdAt: '2025-01-15T12:00:00.000Z',
  ...(normalization !== undefined ? { normalization } : {}),
});

/** The fields of CrawlConfig that reconcileNormalization reads. */
function config(sessionParams: string[], explicit: boolean, maxUrlLength = 2048): CrawlConfig {
  const normalize: NormalizeOptions = Object.freeze({ sessionParams: new Set(sessionParams), maxUrlLength });
  return { dataDir: '/data/crawl', normalize, sessionParamsExplicit: explicit } as unknown as CrawlConfig;
}

describe('reconcileNormalization', () => {
  test('a marker without a normalization (older directory): the configuration as it is', () => {
    const c = config(['sid'], true);
    assert.equal(reconcileNormalization(marker(), c), c.normalize);
  });

  test('the same session parameters in another order: the configuration as it is', () => {
    const c = config(['sid', 'phpsessid'], true);
    assert.equal(reconcileNormalization(marker({ version: NORMALIZATION_VERSION, sessionParams: ['phpsessid', 'sid'] }), c), c.normalize);
  });

  test('another normalization version: FORMAT_MISMATCH, whatever the options', () => {
    assert.throws(
      () => reconcileNormalization(marker({ version: NORMALIZATION_VERSION + 1, sessionParams: ['sid'] }), config(['sid'], false)),
      (err: unknown) => {
        assert.ok(err instanceof FatalError);
        assert.equal(err.code, 'FORMAT_MISMATCH');
        assert.equal(err.exitCode, ExitCode.DATA_DIR);
        assert.match(err.message, /\/data\/crawl/);
        return true;
      },
    );
  });

  test('an explicit --session-params that differs from the directory: BAD_OPTION', () => {
    assert.throws(
      () => reconcileNormalization(marker({ version: NORMALIZATION_VERSION, sessionParams: ['sid'] }), config(['sid', 'token'], true)),
      (err: unknown) => {
        assert.ok(err instanceof FatalError);
        assert.equal(err.code, 'BAD_OPTION');
        assert.equal(err.exitCode, ExitCode.USAGE);
        return true;
      },
    );
  });

  test("the default session parameters that differ: the directory's, other options kept, frozen", () => {
    const c = config([...DEFAULT_NORMALIZE_OPTIONS.sessionParams], false, 4096);
    const r = reconcileNormalization(marker({ version: NORMALIZATION_VERSION, sessionParams: ['token'] }), c);
    assert.deepEqual([...r.sessionParams], ['token']);
    assert.equal(r.maxUrlLength, 4096);
    assert.ok(Object.isFrozen(r));
    assert.deepEqual([...c.normalize.sessionParams].sort(), [...DEFAULT_NORMALIZE_OPTIONS.sessionParams].sort(), 'config untouched');
    // None at all recorded (--session-params '' when created).
    const none = reconcileNormalization(marker({ version: NORMALIZATION_VERSION, sessionParams: [] }), c);
    assert.equal(none.sessionParams.size, 0);
  });
});
