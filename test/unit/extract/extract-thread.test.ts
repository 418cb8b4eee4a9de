import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ExtractThread } from '../../../src/extract/extract-thread.js';
import { extractLinks } from '../../../src/extract/link-extractor.js';
import { DEFAULT_NORMALIZE_OPTIONS, type NormalizeOptions } from '../../../src/url/normalize.js';
import { runNodeScript } from '../../support/node-script.js';
import { freshDirs } from '../../support/temp-paths.js';
import { until } from '../../support/until.js';

const freshDir = freshDirs('mountcrawl-extractthread-');
const NORMALIZE: NormalizeOptions = { sessionParams: new Set(['sid', 'jsessionid']), maxUrlLength: 120 };

/** Pages of every kind the extractor handles, with the content type each is served with. */
function pages(): { url: string; body: Buffer; type: string | null; truncated: boolean }[] {
  const out: { url: string; body: Buffer; type: string | null; truncated: boolean }[] = [];
  for (let n = 0; n < 300; n++) {
    const url = `http://h${n % 7}.example/dir/p${n}.html`;
    const links = Array.from({ length: n % 40 }, (_, i) => `<a href="../l${i}.html?sid=${n}&amp;q=${i}">x</a>`).join('');
    let html: string;
    let type: string | null = 'text/html';
    let body: Buffer | undefined;
    switch (n % 6) {
      case 0:
        html = `<base href="http://other.example/b/">${links}<a href="mailto:x@y">m</a><a href="#top">t</a>`;
        break;
      case 1:
        html = `<meta charset="windows-1252"><a href="caf\xe9.html">c</a><a href="/${'z'.repeat(200)}">long</a>${links}`;
        body = Buffer.from(html, 'latin1');
        type = null;
        break;
      case 2:
        html = `<meta name="robots" content="nofollow">${links}`;
        break;
      case 3:
        html = `<a rel="nofollow" href="/nf">n</a><script>var s = "<a href='/not'>";</script><!-- <a href="/no"> -->${links}<iframe src="/frame"></iframe>`;
        break;
      case 4:
        body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`<a href="/utf16">u</a>${links}`, 'utf16le')]);
        html = '';
        break;
      default:
        html = `<a href="/日本/ü?x=1">n</a>${links}<a href="/cut`;
    }
    out.push({ url, body: body ?? Buffer.from(html, 'utf8'), type, truncated: n % 6 === 5 });
  }
  return out;
}

/** The thread listens once a page it was sent is answered by it. */
async function whenListening(thread: ExtractThread): Promise<void> {
  await until(async () => {
    await thread.extract(Buffer.from('<a href="/w">w</a>'), 'http://warm.example/', 'text/html', false, {});
    return thread.pagesByThread > 0;
  }, 10_000);
}

describe('ExtractThread', () => {
  test("many pages at once: each page's answer is extractLinks's, and the callers' buffers are left as they were", async () => {
    const thread = new ExtractThread(NORMALIZE);
    try {
      await whenListening(thread);
      const before = thread.pagesByThread;
      // Each body a view into one larger buffer, as a Buffer often is.
      const all = pages();
      const joined = Buffer.concat(all.map((p) => p.body));
      let at = 0;
      const views = all.map((p) => {
        const view = joined.subarray(at, at + p.body.length);
        at += p.body.length;
        return view;
      });
      const answers = await Promise.all(
        all.map((p, i) => thread.extract(views[i]!, p.url, p.type, p.truncated, { obeyRelNofollow: i % 2 === 0 })),
      );
      all.forEach((p, i) => {
        const expected = extractLinks(p.body, p.url, p.type, p.truncated, NORMALIZE, { obeyRelNofollow: i % 2 === 0 });
        assert.deepEqual(answers[i], expected, `page ${i}`);
      });
      assert.equal(thread.pagesByThread - before, all.length, 'every page was read by the thread');
      assert.ok(answers.some((a) => a.links.length > 30) && answers.some((a) => a.tooLong > 0) && answers.some((a) => a.robots.nofollow));
      assert.ok(joined.equals(Buffer.concat(all.map((p) => p.body))), 'the bodies are untouched (not moved away)');
    } finally {
      thread.close();
    }
  });

  test('before the thread listens, a page is read on the main thread, with the same answer', async () => {
    const thread = new ExtractThread(DEFAULT_NORMALIZE_OPTIONS);
    try {
      const body = Buffer.from('<a href="/a">a</a><a href="b">b</a>');
      const answer = await thread.extract(body, 'http://x.example/d/', 'text/html', false, {});
      assert.equal(thread.pagesByThread, 0, 'the first page does not wait for the thread to start');
      assert.deepEqual(answer.links, ['http://x.example/a', 'http://x.example/d/b']);
    } finally {
      thread.close();
    }
  });

  test('start: the thread loads before the first page, which it then reads', async () => {
    const thread = new ExtractThread(DEFAULT_NORMALIZE_OPTIONS);
    try {
      assert.equal(thread.listening, false);
      thread.start();
      await until(() => thread.listening, 10_000);
      const answer = await thread.extract(Buffer.from('<a href="/a">a</a>'), 'http://x.example/d/', 'text/html', false, {});
      assert.equal(thread.pagesByThread, 1, 'the first page went to the thread');
      assert.deepEqual(answer.links, ['http://x.example/a']);
    } finally {
      thread.close();
    }
    assert.equal(thread.listening, false, 'closed');
  });

  test('a thread that stops: the pages it had are read on the main thread, and so are later ones', async () => {
    const dir = await freshDir();
    // Says it listens, then exits at the first batch it is sent.
    const failing = join(dir, 'failing-worker.mjs');
    await writeFile(
      failing,
      `import { parentPort } from 'node:worker_threads';
      parentPort.on('message', () => process.exit(3));
      parentPort.postMessage('ready');`,
    );
    const thread = new ExtractThread(DEFAULT_NORMALIZE_OPTIONS, new URL(`file://${failing}`));
    const page = (n: number): Buffer => Buffer.from(`<a href="/p${n}">p</a>`);
    // The first page starts the thread; wait until it says it listens.
    await thread.extract(page(0), 'http://x.example/', 'text/html', false, {});
    await new Promise((r) => setTimeout(r, 500));
    const answers = await Promise.all([1, 2, 3].map((n) => thread.extract(page(n), 'http://x.example/', 'text/html', false, {})));
    assert.deepEqual(
      answers.map((a) => a.links),
      [['http://x.example/p1'], ['http://x.example/p2'], ['http://x.example/p3']],
    );
    assert.equal(thread.pagesByThread, 0);
    assert.deepEqual((await thread.extract(page(4), 'http://x.example/', 'text/html', false, {})).links, ['http://x.example/p4']);
    thread.close();
  });

  test('a thread that cannot start (no such module, a URL a worker cannot load): every page is read on the main thread', async () => {
    const dir = await freshDir();
    for (const file of [new URL(`file://${join(dir, 'missing.mjs')}`), new URL('https://example.invalid/worker.mjs')]) {
      const thread = new ExtractThread(DEFAULT_NORMALIZE_OPTIONS, file);
      for (let n = 0; n < 5; n++) {
        const answer = await thread.extract(Buffer.from(`<a href="/p${n}">p</a>`), 'http://x.example/', 'text/html', false, {});
        assert.deepEqual(answer.links, [`http://x.example/p${n}`], `${file.protocol} page ${n}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(thread.pagesByThread, 0);
      thread.close();
    }
  });

  test('an idle thread, started or used, does not keep the process alive', async () => {
    const dir = await freshDir();
    const module = fileURLToPath(new URL('../../../src/extract/extract-thread.js', import.meta.url));
    const script = `
      const { ExtractThread } = await import(${JSON.stringify(module)});
      // One thread started and never sent a page, one that read a page.
      new ExtractThread({ sessionParams: new Set(), maxUrlLength: 2048 }).start();
      const thread = new ExtractThread({ sessionParams: new Set(), maxUrlLength: 2048 });
      let links;
      for (let i = 0; i < 500 && thread.pagesByThread === 0; i++) {
        links = (await thread.extract(Buffer.from('<a href="/x">x</a>'), 'http://c.example/', 'text/html', false, {})).links;
        await new Promise((r) => setTimeout(r, 10));
      }
      console.log(thread.pagesByThread > 0 ? 'read by the thread: ' + links.join(' ') : 'the thread never answered');`;
    const { code, stdout } = await runNodeScript(dir, script, 15_000);
    assert.equal(stdout, 'read by the thread: http://c.example/x');
    assert.equal(code, 0, 'exited by itself (not killed after 15 s)');
  });

  test('forProcesses: a thread when each process of the machine has two cores, else none', () => {
    const one = ExtractThread.forProcesses(DEFAULT_NORMALIZE_OPTIONS, 1, 2);
    assert.ok(one instanceof ExtractThread);
    one.close();
    assert.equal(ExtractThread.forProcesses(DEFAULT_NORMALIZE_OPTIONS, 2, 2), undefined);
    assert.equal(ExtractThread.forProcesses(DEFAULT_NORMALIZE_OPTIONS, 1, 1), undefined);
    const four = ExtractThread.forProcesses(DEFAULT_NORMALIZE_OPTIONS, 4, 8);
    assert.ok(four instanceof ExtractThread);
    four.close();
  });
});
