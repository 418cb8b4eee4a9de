import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { silentLogger, StreamLogger } from '../../../src/progress/logger.js';

const AT = Date.UTC(2025, 0, 15, 12, 0, 0);

function capture(options: { json: boolean; quiet: boolean; verbose?: boolean; nodeId?: string }): {
  logger: StreamLogger;
  lines: string[];
} {
  const lines: string[] = [];
  const logger = new StreamLogger({ ...options, clock: () => AT }, (line) => lines.push(line));
  return { logger, lines };
}

describe('StreamLogger: plain lines', () => {
  test('message then key=value fields; strings as they are, other values as JSON', () => {
    const { logger, lines } = capture({ json: false, quiet: false });
    logger.info('took host over', { host: 'example.org', from: 'ws2-200', count: 3, list: ['a', 'b'], flag: true });
    logger.info('plain');
    assert.deepEqual(lines, [
      'mountcrawl: took host over host=example.org from=ws2-200 count=3 list=["a","b"] flag=true',
      'mountcrawl: plain',
    ]);
  });

  test('warnings say so; errors carry their code in the message', () => {
    const { logger, lines } = capture({ json: false, quiet: false });
    logger.warn('lost the lease of a host', { host: 'example.org' });
    logger.error('DISK_FULL: no space left');
    assert.deepEqual(lines, ['mountcrawl: warning: lost the lease of a host host=example.org', 'mountcrawl: DISK_FULL: no space left']);
  });

  test('quiet drops info lines only', () => {
    const { logger, lines } = capture({ json: false, quiet: true });
    logger.info('progress');
    logger.warn('careful');
    logger.error('broken');
    assert.deepEqual(lines, ['mountcrawl: warning: careful', 'mountcrawl: broken']);
  });
});

describe('StreamLogger: details of the machinery (debug)', () => {
  test('left out of plain lines by default; printed with verbose; always in JSON; dropped when quiet', () => {
    const plain = capture({ json: false, quiet: false });
    plain.logger.debug('reseed', { queued: 5, full: true });
    plain.logger.info('took host over', { host: 'h' });
    assert.deepEqual(plain.lines, ['mountcrawl: took host over host=h']);

    const verbose = capture({ json: false, quiet: false, verbose: true });
    verbose.logger.debug('reseed', { queued: 5, full: true });
    assert.deepEqual(verbose.lines, ['mountcrawl: reseed queued=5 full=true']);

    const json = capture({ json: true, quiet: false });
    json.logger.debug('reseed', { queued: 5 });
    assert.deepEqual(
      json.lines.map((l) => JSON.parse(l) as { level: string; msg: string; queued: number }),
      [{ time: new Date(AT).toISOString(), level: 'debug', msg: 'reseed', queued: 5 }],
    );

    const quiet = capture({ json: true, quiet: true, verbose: true });
    quiet.logger.debug('reseed');
    assert.deepEqual(quiet.lines, []);
  });
});

describe('StreamLogger: JSON lines', () => {
  test('one JSON object per line: time from the clock, level, node, msg and the fields', () => {
    const { logger, lines } = capture({ json: true, quiet: false, nodeId: 'ws1-100' });
    logger.info('reseed', { queued: 12, full: false });
    logger.warn('slow mount');
    logger.error('MOUNT_IO: gone', { path: '/data' });
    assert.equal(lines.length, 3);
    assert.ok(lines.every((l) => !l.includes('\n')));
    assert.deepEqual(
      lines.map((l) => JSON.parse(l)),
      [
        { time: new Date(AT).toISOString(), level: 'info', node: 'ws1-100', msg: 'reseed', queued: 12, full: false },
        { time: new Date(AT).toISOString(), level: 'warn', node: 'ws1-100', msg: 'slow mount' },
        { time: new Date(AT).toISOString(), level: 'error', node: 'ws1-100', msg: 'MOUNT_IO: gone', path: '/data' },
      ],
    );
  });

  test('quiet drops info lines in JSON mode too', () => {
    const { logger, lines } = capture({ json: true, quiet: true });
    logger.info('x');
    logger.warn('y');
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { level: string }).level),
      ['warn'],
    );
  });
});

describe('StreamLogger: writers', () => {
  test('setWriter redirects later lines and returns the previous writer', () => {
    const { logger, lines } = capture({ json: false, quiet: false });
    logger.info('before');
    const above: string[] = [];
    const previous = logger.setWriter((line) => above.push(line));
    logger.info('during');
    const mine = logger.setWriter(previous);
    logger.info('after');
    mine('direct');
    assert.deepEqual(lines, ['mountcrawl: before', 'mountcrawl: after']);
    assert.deepEqual(above, ['mountcrawl: during', 'direct']);
  });

  test('forward passes a formatted line through unchanged, even when quiet', () => {
    const { logger, lines } = capture({ json: true, quiet: true });
    logger.forward('{"level":"info","msg":"from a child"}');
    assert.deepEqual(lines, ['{"level":"info","msg":"from a child"}']);
  });
});

describe('silentLogger', () => {
  test('drops everything and is frozen', () => {
    silentLogger.debug('x');
    silentLogger.info('x');
    silentLogger.warn('x', { a: 1 });
    silentLogger.error('x');
    assert.ok(Object.isFrozen(silentLogger));
  });
});
