import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { StreamLogger } from '../../../src/progress/logger.js';
import { ProgressDisplay } from '../../../src/progress/progress-display.js';
import { totalOf, type Snapshot } from '../../../src/progress/snapshot.js';
import { AnsiScreen } from '../../support/ansi-screen.js';

function snap(label: string, pages: number): Snapshot {
  return { label, pages, queued: 120, inFlight: 2, errors: 0, rate: 3.5, round: 1, hostsOwned: 3, nodesAlive: 3, state: 'crawling' };
}

/** A display drawing on a stand-in terminal, its logger printing through it as the CLI's does. */
function onScreen(): { screen: AnsiScreen; logger: StreamLogger; display: ProgressDisplay } {
  const screen = new AnsiScreen();
  const logger = new StreamLogger({ json: false, quiet: false }, (line) => screen.write(`${line}\n`));
  const display = new ProgressDisplay({ enabled: true, json: false, stream: screen }, logger);
  return { screen, logger, display };
}

describe('ProgressDisplay on a terminal', () => {
  test('log lines printed while the bars show are whole lines above them, never mixed with a bar', async () => {
    const { screen, logger, display } = onScreen();
    const snaps = [snap('node 1', 10), snap('node 2', 20), snap('node 3', 30)];
    display.start(() => [...snaps, totalOf('total', snaps)]);
    await sleep(600);
    // What a Ctrl-C of --processes 3 prints at once: the supervisor's warning and each child's.
    const warnings = [
      'SIGINT: stopping 3 nodes after their requests in flight (again to quit at once)',
      '[1] mountcrawl: warning: SIGINT: stopping',
      '[2] x',
    ];
    logger.warn(warnings[0]!);
    logger.forward(warnings[1]!);
    logger.forward(warnings[2]!);
    await sleep(600);
    display.stop([...snaps, totalOf('total', snaps)]);

    const lines = screen.text();
    const expectedLogs = [`mountcrawl: warning: ${warnings[0]}`, warnings[1], warnings[2]];
    assert.deepEqual(
      lines.filter((l) => !/^(node \d|total)\s+\[/.test(l)),
      expectedLogs,
      `every line is a bar or a log line as written:\n${lines.join('\n')}`,
    );
    // The bars once each, below the log lines.
    const bars = lines.slice(expectedLogs.length);
    assert.deepEqual(
      bars.map((l) => l.split(' [')[0]!.trim()),
      ['node 1', 'node 2', 'node 3', 'total'],
    );
    assert.match(bars[3]!, /60\/\d+ pages \| 360 queued \| 0 err \| 10\.5\/s \| round 1 \| 9 hosts \| 3 nodes \| crawling$/);
  });

  test('a line logged just before the display stops is printed, not lost with the bars', async () => {
    const { screen, logger, display } = onScreen();
    display.start(() => [snap('node 1', 1)]);
    await sleep(300);
    logger.warn('SIGINT: stopping after the requests in flight (again to quit at once)');
    display.stop();
    assert.ok(screen.text().includes('mountcrawl: warning: SIGINT: stopping after the requests in flight (again to quit at once)'));
  });

  test('before any node has reported, the bar shows neither hosts nor nodes', async () => {
    const { screen, display } = onScreen();
    display.start(() => [totalOf('total', [])]);
    await sleep(400);
    display.stop();
    const [bar] = screen.text();
    assert.match(bar!, /\| round 0 \| starting$/);
  });
});

describe('ProgressDisplay off a terminal', () => {
  test('the first plain line has no dangling separator and no node count before membership is known', async () => {
    const lines: string[] = [];
    const logger = new StreamLogger({ json: false, quiet: false }, (line) => lines.push(line));
    const pipe = new Writable({ write: (_c, _e, done) => done() });
    const display = new ProgressDisplay({ enabled: true, json: false, stream: pipe }, logger);
    display.start(() => [totalOf('total', [])]);
    await sleep(1_200);
    display.stop();
    assert.deepEqual(lines, ['mountcrawl: total: 0 pages, 0 queued, 0 in flight, 0 errors, 0/s, round 0, starting']);
  });
});
