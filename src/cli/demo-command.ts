import { startGeneratedSite } from '../site/generated-site.js';
import { collectStatus } from './status-command.js';

/** Options of `mountcrawl demo`. */
export interface DemoOptions {
  readonly dataDir: string;
  readonly processes: number;
  readonly hosts: number;
  readonly pages: number;
  readonly progress: boolean;
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
    firstOctet: 20,
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
    out(`${status.pages} pages done, ${status.errors.total} errors (${Object.entries(status.errors.byCode).map(([c, n]) => `${c} ${n}`).join(', ') || 'none'}), ${site.total} requests served`);
    for (const h of status.hosts) out(`  ${h.host.padEnd(24)} ${String(h.pages).padStart(5)} pages`);
    const first = status.hosts[0]?.host ?? '<host>';
    out('');
    out('browse it:');
    out(`  ls ${options.dataDir}/html/${first} | head`);
    out(`  jq -r '.links[]' ${options.dataDir}/links/${first}/*.json | sort -u | head`);
    out(`  grep -l 'Page 7<' ${options.dataDir}/html/*/*.html`);
    out(`  npx mountcrawl status --data ${options.dataDir}`);
    return code;
  } finally {
    await site.close();
  }
}
