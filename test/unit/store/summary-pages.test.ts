import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { emptySummary, readSummaryFile, writeHostSummary } from '../../../src/store/host-summary.js';
import { Layout } from '../../../src/store/layout.js';
import { readSummaryPages } from '../../../src/store/summary-pages.js';
import { urlKey } from '../../../src/url/key.js';
import { freshDirs } from '../../support/temp-paths.js';

const dirs = freshDirs('mountcrawl-summary-pages-');
const HOST = 'a.test';

async function layoutIn(): Promise<Layout> {
  const layout = new Layout(await dirs());
  await mkdir(`${layout.root}/summaries`);
  return layout;
}

test('readSummaryPages: the pages of a summary as writeHostSummary writes it, over many chunks, as readSummaryFile reads them', async () => {
  const layout = await layoutIn();
  const s = emptySummary();
  for (let i = 0; i < 3000; i++) {
    const url = `http://${HOST}/page/${i}`;
    s.pages.set(urlKey(url), { url, depth: i % 7 });
    s.links.set(`http://${HOST}/page/${i + 1}`, urlKey(url));
  }
  await writeHostSummary(layout, HOST, s, { nodeId: 'n1', fsync: false, nowMs: 0 });
  const pages = await readSummaryPages(layout, HOST);
  assert.equal(pages?.length, 3000);
  assert.deepEqual(pages, (await readSummaryFile(layout, HOST))!.pages);
  assert.equal(await readSummaryPages(layout, 'b.test'), undefined, 'no summary');
});

test('readSummaryPages: found when the end of the pages falls across two reads; the links after them are not parsed', async () => {
  const layout = await layoutIn();
  const key = urlKey('http://a.test/x');
  const head = `{"v":1,"host":"${HOST}","writtenAt":"t","pages":[["${key}","http://a.test/`;
  for (const end of [65_530, 65_536, 65_540]) {
    // The pages end (at their closing bracket) at byte `end`: the text after them spans the 64 KiB read.
    const url = `http://a.test/${'x'.repeat(end - head.length - 4)}`;
    const text = `{"v":1,"host":"${HOST}","writtenAt":"t","pages":[["${key}","${url}",3]],"links":[not json at all`;
    assert.equal(text.indexOf('],"links":['), end);
    await writeFile(layout.summary(HOST), text);
    assert.deepEqual(await readSummaryPages(layout, HOST), [[key, url, 3]]);
  }
});

test('readSummaryPages: undefined for pages that do not parse, another version or another host', async () => {
  const layout = await layoutIn();
  const key = urlKey('http://a.test/x');
  for (const text of [
    `{"v":1,"host":"${HOST}","writtenAt":"t","pages":[["${key}","http://a.test/x"`,
    `{"v":1,"host":"${HOST}","writtenAt":"t","pages":[["not a key","http://a.test/x",1]],"links":[]}`,
    `{"v":2,"host":"${HOST}","writtenAt":"t","pages":[["${key}","http://a.test/x",1]],"links":[]}`,
    `{"v":1,"host":"b.test","writtenAt":"t","pages":[["${key}","http://a.test/x",1]],"links":[]}`,
  ]) {
    await writeFile(layout.summary(HOST), text);
    assert.equal(await readSummaryPages(layout, HOST), undefined, text);
  }
});
