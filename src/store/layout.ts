import { basename, dirname, join } from 'node:path';
import { type Mount, nodeMount } from './mount.js';
import type { MountFs } from './mount-fs.js';

/**
 * Where everything lives in the data directory (docs/protocol.md, "What is on the mount"). The only module that builds
 * paths on the mount: every other module asks it.
 */
export const DIRS = Object.freeze({
  seeds: 'seeds',
  html: 'html',
  links: 'links',
  errs: 'errs',
  hosts: 'hosts',
  nodes: 'nodes',
  robots: 'robots',
  /** Bodies of non-HTML responses kept with --keep. */
  files: 'files',
  handoff: 'handoff',
});

/** With --warc: each node's WARC files (docs/warc.md). Made by the first node that writes one, not with the others. */
export const WARC_DIR = 'warc';
/** Recrawl schedules (docs/recrawl.md): made by the first recrawl, not with the data directory. */
export const SCHEDULE_DIR = 'schedule';
/** Host summaries (docs/protocol.md, "Host summaries"): made by the first node that writes one. */
export const SUMMARY_DIR = 'summaries';
/** Sitemaps given with --sitemap (docs/sitemaps.md): made by the first node given one. */
export const SITEMAPS_DIR = 'sitemaps';
/** The folders a crawl makes later than the data directory's own (DIRS): not foreign to it either. */
export const LATER_DIRS: readonly string[] = [WARC_DIR, SCHEDULE_DIR, SUMMARY_DIR, SITEMAPS_DIR];

/** Written when a data directory is created; its absence later means the mount is gone. */
export const MARKER_FILE = '.mountcrawl';

/** The per-host record directories, in the order a host's files are written. */
export type HostKind = 'html' | 'links' | 'errs' | 'files';

/** The paths of a data directory, and the file system it is on (Mount). */
export class Layout {
  constructor(
    readonly root: string,
    readonly mount: Mount = nodeMount,
  ) {}

  /** The file system of the data directory. */
  get fs(): MountFs {
    return this.mount.fs;
  }

  dir(name: keyof typeof DIRS): string {
    return join(this.root, DIRS[name]);
  }

  hostDir(kind: HostKind, hostDir: string): string {
    return join(this.root, DIRS[kind], hostDir);
  }

  html(hostDir: string, key: string): string {
    return join(this.root, DIRS.html, hostDir, `${key}.html`);
  }

  links(hostDir: string, key: string): string {
    return join(this.root, DIRS.links, hostDir, `${key}.json`);
  }

  errs(hostDir: string, key: string): string {
    return join(this.root, DIRS.errs, hostDir, `${key}.json`);
  }

  seed(key: string): string {
    return join(this.root, DIRS.seeds, `${key}.url`);
  }

  lease(hostDir: string): string {
    return join(this.root, DIRS.hosts, `${hostDir}.lease`);
  }

  node(nodeId: string): string {
    return join(this.root, DIRS.nodes, `${nodeId}.json`);
  }

  warc(): string {
    return join(this.root, WARC_DIR);
  }

  robots(hostDir: string): string {
    return join(this.root, DIRS.robots, `${hostDir}.txt`);
  }

  /** The hand-off inbox of a node (docs/protocol.md, "Hand-offs"). */
  inbox(nodeId: string): string {
    return join(this.root, DIRS.handoff, nodeId);
  }

  /** The recrawl schedule of a host (docs/recrawl.md). */
  schedule(hostDir: string): string {
    return join(this.root, SCHEDULE_DIR, `${hostDir}.json`);
  }

  /** The summary of a host's links records (docs/protocol.md, "Host summaries"). */
  summary(hostDir: string): string {
    return join(this.root, SUMMARY_DIR, `${hostDir}.json`);
  }

  /** The directory of sitemaps given with --sitemap, one `<key>.url` file each (docs/sitemaps.md). */
  sitemapSeeds(): string {
    return join(this.root, SITEMAPS_DIR);
  }

  marker(): string {
    return join(this.root, MARKER_FILE);
  }

  /** Path of an html file relative to the root, as links records cite it. */
  /** A body kept with --keep: files/<host>/<key>.<ext>. */
  file(hostDir: string, key: string, ext: string): string {
    return join(this.root, DIRS.files, hostDir, `${key}.${ext}`);
  }

  /** Path of a kept file relative to the root, as links records cite it. */
  relativeFile(hostDir: string, key: string, ext: string): string {
    return `${DIRS.files}/${hostDir}/${key}.${ext}`;
  }

  relativeHtml(hostDir: string, key: string): string {
    return `${DIRS.html}/${hostDir}/${key}.html`;
  }
}

/**
 * The claim to take over the lease at `leasePath` whose token is `token`:
 * `.<host>.lease.<token>~takeover~0.tmp`, the same name for every node, so that exactly one
 * creates it (docs/protocol.md, "Who crawls what"). A temporary name (tempOwner reads
 * `takeover`), left for the temp sweeper.
 */
export function takeoverClaimPath(leasePath: string, token: string): string {
  const safeToken = token.replace(/[^A-Za-z0-9-]/g, '').slice(0, 64);
  return join(dirname(leasePath), `.${basename(leasePath)}.${safeToken}~takeover~0.tmp`);
}
