import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startGeneratedSite } from '../site/generated-site.js';
import { collectStatus } from './status-command.js';
import { errorsApart, excludedPart, formatByCode } from '../store/holdings.js';

/** The demo site's hosts are 127.0.0.20 and up. */
const FIRST_OCTET = 20;

/**
 * The ports an earlier demo in this data directory used, by host index (from its seeds), so
 * that a rerun serves the same hosts: it resumes instead of adding new hosts beside seeds
 * nothing answers any more.
 */
async function earlierPorts(dataDir: string, hosts: number): Promise<(number | undefined)[]> {
  const ports: (number | undefined)[] = new Array<number | undefined>(hosts).fill(undefined);
  let names: string[];
  try {
    names = (await readdir(join(dataDir, 'seeds'))).filter((n) => n.endsWith('.url'));
  } catch {
    return ports;
  }
  for (const name of names) {
    const text = await readFile(join(dataDir, 'seeds', name), 'utf8').catch(() => '');
    const m = /^http:\/\/127\.0\.0\.(\d+):(\d+)\/$/.exec(text.trim());
    if (m === null) continue;
    const index = Number(m[1]) - FIRST_OCTET;
    if (index >= 0 && index < hosts) ports[index] = Number(m[2]);
  }
  return ports;
}

/** Options of `mountcrawl demo`. */
export interface DemoOptions {
  readonly dataDir: string;
  readonly processes: number;
  readonly hosts: number;
  readonly pages: number;
  readonly progress: boolean;
  /** The command as the user ran it (`npx mountcrawl`, `mountcrawl`, ...), for the closing hints. */
  readonly invokedAs: string;
}

/**
 * `mountcrawl demo`: the whole idea in one command, without internet. Starts a small web
 * site of several hosts on loopback addresses (127.0.0.20 and up), crawls it with several
 * nodes on this machine (`crawl --processes N`, the same protocol as nodes on a network),
 * then prints the status of the data directory and how to browse it.
 */
export async function demoCommand(
  options: DemoOptions,
  runCrawl: (args: string[]) => Promise<number>,
  out: (line: string) => void,
): Promise<number> {
  const site = await startGeneratedSite({
    hosts: options.hosts,
    pagesPerHost: options.pages,
    linksPerPage: 6,
    crossLinks: 2,
    disallow: ['/private/'],
    latencyMs: 5,
    firstOctet: FIRST_OCTET,
    ports: await earlierPorts(options.dataDir, options.hosts),
  });
  try {
    out(`demo site: ${options.hosts} hosts x ${options.pages} pages on ${site.hosts[0]!.address} .. ${site.hosts.at(-1)!.address}`);
    out(`crawling with ${options.processes} nodes into ${options.dataDir} ...`);
    const args = [
      'crawl',
      ...site.hosts.map((h) => `${h.origin}/`),
      '--data',
      options.dataDir,
      '--processes',
      String(options.processes),
      '--per-host',
      '2',
      '--delay',
      '0',
      ...(options.progress ? [] : ['--no-progress']),
    ];
    const code = await runCrawl(args);
    const status = await collectStatus(options.dataDir, false);
    out('');
    const e = errorsApart(status.errors);
    const byCode = e.total === 0 ? '' : ` (${formatByCode(e.byCode)})`;
    out(`${status.pages} pages done, ${e.total} errors${byCode}${excludedPart(e.excluded)}, ${site.total} requests served`);
    for (const h of status.hosts) out(`  ${h.host.padEnd(24)} ${String(h.pages).padStart(5)} pages`);
    const first = status.hosts[0]?.host ?? '<host>';
    out('');
    out('browse it:');
    out(`  ls ${options.dataDir}/html/${first} | head`);
    // Not a shell glob over links/HOST/*.json: on a big crawl it is "argument list too long" (README).
    out(`  ${options.invokedAs} export --host ${first} --data ${options.dataDir} | jq -r '.links[]' | sort -u | head`);
    out(`  grep -l 'Page 7<' ${options.dataDir}/html/*/*.html`);
    out(`  ${options.invokedAs} status --data ${options.dataDir}`);
    out(`  ${options.invokedAs} demo --data ${options.dataDir}     # again: the same hosts, nothing fetched twice`);
    return code;
  } finally {
    await site.close();
  }
}
