import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import {
  BENCH_MAX_BYTES,
  DISALLOWED_PREFIXES,
  PAGE_SHAPES,
  generatePage,
  pagePath,
  pageShapeOf,
  relativeHref,
  type PageShape,
  type SiteShape,
} from '../../../bench/pages.js';
import type { ScenarioResult } from '../../../bench/report.js';

const RUN = fileURLToPath(new URL('../../../bench/run.js', import.meta.url));

/** A site shape on made-up ports: the generator needs no server. */
function shape(hosts: number, pagesPerHost: number): SiteShape {
  return {
    hosts: Array.from({ length: hosts }, (_, i) => ({
      index: i,
      origin: `http://127.0.0.${10 + i}:4${i}000`,
      authority: `127.0.0.${10 + i}:4${i}000`,
    })),
    pagesPerHost,
    external: ['http://127.0.0.200:40001', 'http://127.0.0.201:40002', 'http://127.0.0.202:40003'],
  };
}

function hrefs(body: Buffer): string[] {
  return [...body.toString().matchAll(/<a [^>]*href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
}

describe('bench site pages', () => {
  test('relative links are spelled as a browser resolves them', () => {
    assert.equal(relativeHref('/docs/guide/', '/docs/api/v2/x.html'), '../api/v2/x.html');
    assert.equal(relativeHref('/blog/', '/blog/y.html'), 'y.html');
    assert.equal(relativeHref('/products/a-4/', '/'), '../../');
    assert.equal(relativeHref('/', '/'), './');
  });

  for (const pages of ['standard', 'mixed'] as const) {
    test(`every link resolves to a page of the site, a disallowed path, an external host, or is not http (${pages})`, () => {
      const s = { ...shape(3, 60), pages };
      const origins = new Map(s.hosts.map((h) => [h.origin, h.index]));
      const paths = new Set(Array.from({ length: 60 }, (_, i) => pagePath(i)));
      const kinds = { page: 0, disallowed: 0, external: 0, other: 0, fragment: 0 };
      for (let h = 0; h < 3; h++) {
        for (let i = 0; i < 60; i++) {
          const base = `${s.hosts[h]!.origin}${pagePath(i)}`;
          for (const href of hrefs(generatePage(s, h, i).body)) {
            if (href.includes('#')) kinds.fragment++;
            const u = new URL(href, base);
            if (u.protocol !== 'http:') kinds.other++;
            else if (s.external.includes(u.origin)) kinds.external++;
            else {
              assert.ok(origins.has(u.origin), `${href} on ${base} leaves the site`);
              if (DISALLOWED_PREFIXES.some((p) => u.pathname.startsWith(p))) kinds.disallowed++;
              else {
                assert.ok(paths.has(u.pathname) && u.search === '', `${href} on ${base} resolves to ${u.href}, not a page`);
                kinds.page++;
              }
            }
          }
        }
      }
      for (const [k, n] of Object.entries(kinds)) assert.ok(n > 0, `no ${k} links`);
    });
  }

  test('every page is reachable from its host home page; pages are about 30 KB with about 40 links', () => {
    const pages = 300;
    const s = shape(2, pages);
    const seen = new Set([0]);
    const queue = [0];
    let bytes = 0;
    let anchors = 0;
    while (queue.length > 0) {
      const p = generatePage(s, 0, queue.shift()!);
      bytes += p.body.length;
      anchors += p.anchors;
      for (const t of p.sameHost) {
        if (!seen.has(t)) {
          seen.add(t);
          queue.push(t);
        }
      }
    }
    assert.equal(seen.size, pages);
    assert.ok(bytes / pages > 25_000 && bytes / pages < 40_000, `average ${bytes / pages} bytes`);
    assert.ok(anchors / pages > 35 && anchors / pages < 45, `average ${anchors / pages} links`);
    assert.deepEqual(generatePage(s, 1, 7).body, generatePage(s, 1, 7).body, 'not deterministic');
  });
});

describe('bench site page shapes', () => {
  test('each shape has its size and link count; a mixed site holds them all; every page stays reachable', () => {
    const pages = 200;
    const expect: Record<PageShape, { kb: [number, number]; links: [number, number] }> = {
      standard: { kb: [25, 40], links: [35, 45] },
      small: { kb: [4, 8], links: [10, 20] },
      'many-links': { kb: [40, 60], links: [280, 300] },
      scripts: { kb: [120, 160], links: [35, 45] },
      large: { kb: [120, 160], links: [60, 90] },
      'near-max': { kb: [145, 175], links: [35, 45] },
    };
    for (const kind of PAGE_SHAPES) {
      const s = { ...shape(2, pages), pages: kind };
      let bytes = 0;
      let anchors = 0;
      for (let i = 1; i < 41; i++) {
        const p = generatePage(s, 0, i);
        bytes += p.body.length;
        anchors += p.anchors;
      }
      const kb = bytes / 40 / 1024;
      assert.ok(kb >= expect[kind].kb[0] && kb <= expect[kind].kb[1], `${kind}: ${kb} KiB a page`);
      assert.ok(anchors / 40 >= expect[kind].links[0] && anchors / 40 <= expect[kind].links[1], `${kind}: ${anchors / 40} links a page`);
    }
    const mixed = { ...shape(2, pages), pages: 'mixed' as const };
    assert.deepEqual(new Set(Array.from({ length: pages }, (_, i) => pageShapeOf(mixed, i))), new Set(PAGE_SHAPES));
    const seen = new Set([0]);
    const queue = [0];
    while (queue.length > 0) {
      for (const t of generatePage(mixed, 1, queue.shift()!).sameHost) {
        if (!seen.has(t)) {
          seen.add(t);
          queue.push(t);
        }
      }
    }
    assert.equal(seen.size, pages);
  });

  test('near-max pages have every link before BENCH_MAX_BYTES', () => {
    const s = { ...shape(2, 100), pages: 'near-max' as const };
    for (let i = 1; i < 20; i++) {
      const body = generatePage(s, 0, i).body;
      assert.ok(body.lastIndexOf('<a ') < BENCH_MAX_BYTES - 1024, `page ${i}`);
    }
  });
});

describe('npm run bench, smoke test on a tiny site', () => {
  test('produces a well-formed results table', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mountcrawl-bench-test-'));
    try {
      const args = [RUN, '--hosts', '2', '--pages', '10', '--scenarios', '0', '--only', 'baseline,mountcrawl,wget', '--processes', '2'];
      args.push('--results', dir, '--work', dir, '--no-install', '--timeout', '50');
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0, stderr);
      assert.match(stdout, /\| peer \| wall s \| pages\/s \|/);

      const files = (await readdir(dir)).filter((f) => f.endsWith('-0ms.json'));
      assert.equal(files.length, 1, `results files: ${files.join(', ')}`);
      const r = JSON.parse(await readFile(join(dir, files[0]!), 'utf8')) as ScenarioResult;
      assert.equal(r.scenario.latencyMs, 0);
      assert.equal(r.site.pages, 20);
      assert.deepEqual(
        r.peers.map((p) => p.name),
        ['baseline', 'mountcrawl', 'wget'],
      );
      for (const p of r.peers) {
        if (p.skipped !== undefined) {
          assert.equal(p.name, 'wget', `${p.name} skipped: ${p.skipped}`);
          assert.match(p.skipped, /missing/);
          continue;
        }
        assert.equal(p.exitCode, 0, `${p.name}: ${p.errorTail}`);
        for (const field of [
          'wallSeconds',
          'activeSeconds',
          'pagesPerSecond',
          'cpuSeconds',
          'cpuSecondsPerPage',
          'maxRssMb',
          'duplicateFetches',
          'maxInFlightPerHost',
        ] as const) {
          const v = p[field];
          assert.ok(typeof v === 'number' && Number.isFinite(v) && v >= 0, `${p.name}.${field} = ${v}`);
        }
        assert.equal(p.coverage, 1, `${p.name} coverage`);
        assert.equal(p.pages, 20);
        assert.ok(p.wallSeconds! > 0 && p.pagesPerSecond! > 0);
        // Without /usr/bin/time a process that ends within one /proc poll (wget on 20 pages) is
        // marked unread, never reported as 0 MiB; with it every process is read.
        const read = p.processes!.filter((x) => x.unread !== true);
        assert.ok(p.processes!.length >= 1 && read.every((x) => x.peakRssMb > 0), JSON.stringify(p.processes));
        if (p.cpuSource === 'time') assert.equal(read.length, p.processes!.length, JSON.stringify(p.processes));
        assert.equal(p.disallowedFetches, 0, `${p.name} fetched disallowed paths`);
        assert.equal(p.externalFetches, 0, `${p.name} reached hosts outside the site`);
      }
      const m = r.peers.find((p) => p.name === 'mountcrawl')!;
      assert.deepEqual(
        m.processes!.map((x) => x.role),
        ['supervisor', 'node 1', 'node 2'],
      );
      assert.ok(
        m.processes!.every((x) => x.unread !== true && x.peakRssMb > 0),
        JSON.stringify(m.processes),
      );
      assert.equal(m.robotsTxtFetches, 2);
      assert.equal(m.duplicateFetches, 0);
      assert.ok(m.maxInFlightPerHost! <= 8);
      for (const t of r.targets) assert.ok(t.met === null || typeof t.met === 'boolean', JSON.stringify(t));
      assert.ok(r.targets.some((t) => t.target === 'mountcrawl coverage' && t.met === true));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
