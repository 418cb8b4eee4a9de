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
/** Sitemaps given with --sitemap (docs/sitemaps.md): made by the first node given one. */
export const SITEMAPS_DIR = 'sitemaps';

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
 * Temporary files are hidden (leading dot, so `ls` and fast-glob skip them) and name their
 * writer: `.<final name>~<node id>~<process tag><sequence>.tmp` (docs/protocol.md,
 * "Invariants" 1 and 4). Whoever takes over a dead node's hosts removes them; tempOwner
 * parses them. `~` separates the parts: it appears in no final name and in no node id. The
 * format only: every writer takes its names from nextTempName.
 */
export function tempName(finalName: string, nodeId: string, seq: number): string {
  return `.${finalName}~${nodeId}~${PROCESS_TAG}${seq.toString(36)}.tmp`;
}

/** The one sequence of temporary names of this process: atomic writes, exclusive creates, leases moved aside. */
let tempSequence = 0;

/**
 * A new temporary name (tempName) for a file named `finalName` written by `nodeId`: no two
 * calls of this process, whichever module makes them, get the same name (temporary files are
 * created exclusively).
 */
export function nextTempName(finalName: string, nodeId: string): string {
  return tempName(finalName, nodeId, tempSequence++);
}

/** nextTempName for the file at `path`, in its directory (a temporary file is renamed or linked into place). */
export function nextTempPath(path: string, nodeId: string): string {
  return join(dirname(path), nextTempName(basename(path), nodeId));
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

/**
 * Random per process: a node id can be reused (--node-id, or host name and pid in
 * containers), and a temp file a killed earlier run left behind must never collide with a
 * new one (temp files are created exclusively).
 */
export const PROCESS_TAG = Math.floor(Math.random() * 36 ** 6)
  .toString(36)
  .padStart(6, '0');

const TEMP = /^\.[^~]+~([A-Za-z0-9._-]+)~[0-9a-z]+\.tmp$/;

/** The node id inside a temporary file name, or undefined when `name` is not one. */
export function tempOwner(name: string): string | undefined {
  const m = TEMP.exec(name);
  return m === null ? undefined : m[1];
}
