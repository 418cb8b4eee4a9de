import { posix } from 'node:path';
import type { MountFs, MountStat } from '../../src/store/mount-fs.js';

/** A file's bytes and time; two names of one file (link) share it. */
interface FileNode {
  readonly kind: 'file';
  readonly data: Buffer;
  readonly mtimeMs: number;
}

interface DirNode {
  readonly kind: 'dir';
  readonly children: Set<string>;
  mtimeMs: number;
}

type Node = FileNode | DirNode;

/** A node-style error: `code`, `syscall` and `path`, as node's fs throws them. */
function fsError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path });
}

/**
 * An in-memory MountFs (src/store/mount-fs.ts): one tree of directories and files, shared by
 * every node of a test that is given it. Each call takes effect when it is made, whole, and
 * answers as a local POSIX file system does: ENOENT for a missing name or parent, EEXIST,
 * ENOTDIR, EISDIR, ENOTEMPTY. Times (a file's mtime, a directory's when its entries change)
 * come from `now`, the test's clock: the "file server's" clock. A listing is sorted, so that a
 * run does not depend on the order of insertion. `calls` counts the calls by name.
 */
export class MemoryFs implements MountFs {
  readonly #nodes = new Map<string, Node>([['/', { kind: 'dir', children: new Set(), mtimeMs: 0 }]]);
  readonly #now: () => number;
  readonly calls = new Map<string, number>();

  constructor(now: () => number = () => 0) {
    this.#now = now;
  }

  /** Every path of a file whose name satisfies `test`, sorted (for a test's checks). */
  files(test: (path: string) => boolean = () => true): string[] {
    return [...this.#nodes]
      .filter(([p, n]) => n.kind === 'file' && test(p))
      .map(([p]) => p)
      .sort();
  }

  /** True when `path` names a file or a directory. */
  exists(path: string): boolean {
    return this.#nodes.has(posix.resolve(path));
  }

  async readFile(path: string): Promise<Buffer> {
    const node = this.#get('readFile', 'open', path);
    if (node.kind === 'dir') throw fsError('EISDIR', 'read', path);
    return Buffer.from(node.data);
  }

  async writeNew(path: string, data: string | Uint8Array): Promise<void> {
    const p = this.#count('writeNew', path);
    this.#parentDir('open', p);
    if (this.#nodes.has(p)) throw fsError('EEXIST', 'open', path);
    this.#add(p, { kind: 'file', data: Buffer.from(data), mtimeMs: this.#now() });
  }

  async rename(from: string, to: string): Promise<void> {
    const f = this.#count('rename', from);
    const t = posix.resolve(to);
    const node = this.#nodes.get(f);
    if (node === undefined) throw fsError('ENOENT', 'rename', from);
    this.#parentDir('rename', t);
    if (f === t) return;
    const target = this.#nodes.get(t);
    if (node.kind === 'file' && target?.kind === 'dir') throw fsError('EISDIR', 'rename', to);
    if (node.kind === 'dir') {
      if (target?.kind === 'file') throw fsError('ENOTDIR', 'rename', to);
      if (target !== undefined && target.children.size > 0) throw fsError('ENOTEMPTY', 'rename', to);
      if (t.startsWith(`${f}/`)) throw fsError('EINVAL', 'rename', to);
    }
    if (target !== undefined) this.#remove(t);
    this.#remove(f);
    this.#add(t, node);
    if (node.kind === 'dir') {
      for (const [p, n] of [...this.#nodes]) {
        if (!p.startsWith(`${f}/`)) continue;
        this.#nodes.delete(p);
        this.#nodes.set(t + p.slice(f.length), n);
      }
    }
  }

  async link(existing: string, newPath: string): Promise<void> {
    const node = this.#get('link', 'link', existing);
    const n = posix.resolve(newPath);
    if (node.kind === 'dir') throw fsError('EPERM', 'link', existing);
    this.#parentDir('link', n);
    if (this.#nodes.has(n)) throw fsError('EEXIST', 'link', newPath);
    this.#add(n, node);
  }

  async unlink(path: string): Promise<void> {
    const node = this.#get('unlink', 'unlink', path);
    if (node.kind === 'dir') throw fsError('EISDIR', 'unlink', path);
    this.#remove(posix.resolve(path));
  }

  async mkdir(path: string, options?: { readonly recursive?: boolean }): Promise<void> {
    const p = this.#count('mkdir', path);
    const existing = this.#nodes.get(p);
    if (existing !== undefined) {
      if (options?.recursive === true && existing.kind === 'dir') return;
      throw fsError(existing.kind === 'dir' || options?.recursive !== true ? 'EEXIST' : 'ENOTDIR', 'mkdir', path);
    }
    const parent = posix.dirname(p);
    if (options?.recursive === true && !this.#nodes.has(parent)) await this.mkdir(parent, options);
    this.#parentDir('mkdir', p);
    this.#add(p, { kind: 'dir', children: new Set(), mtimeMs: this.#now() });
  }

  async rmdir(path: string): Promise<void> {
    const node = this.#get('rmdir', 'rmdir', path);
    if (node.kind !== 'dir') throw fsError('ENOTDIR', 'rmdir', path);
    if (node.children.size > 0) throw fsError('ENOTEMPTY', 'rmdir', path);
    const p = posix.resolve(path);
    if (p === '/') throw fsError('EBUSY', 'rmdir', path);
    this.#remove(p);
  }

  async readdir(path: string): Promise<string[]> {
    const node = this.#get('readdir', 'scandir', path);
    if (node.kind !== 'dir') throw fsError('ENOTDIR', 'scandir', path);
    return [...node.children].sort();
  }

  async stat(path: string): Promise<MountStat> {
    const node = this.#get('stat', 'stat', path);
    const size = node.kind === 'file' ? node.data.length : 4096;
    return { size, mtimeMs: node.mtimeMs, isDirectory: () => node.kind === 'dir', isFile: () => node.kind === 'file' };
  }

  #count(method: string, path: string): string {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    return posix.resolve(path);
  }

  /** The node at `path`, or ENOENT (also for a parent that is a file: ENOTDIR). */
  #get(method: string, syscall: string, path: string): Node {
    const p = this.#count(method, path);
    const node = this.#nodes.get(p);
    if (node !== undefined) return node;
    const parent = this.#nodes.get(posix.dirname(p));
    throw fsError(parent?.kind === 'file' ? 'ENOTDIR' : 'ENOENT', syscall, path);
  }

  /** The directory `p` goes into: ENOENT when it is missing, ENOTDIR when it is a file. */
  #parentDir(syscall: string, p: string): DirNode {
    const parent = this.#nodes.get(posix.dirname(p));
    if (parent === undefined) throw fsError('ENOENT', syscall, p);
    if (parent.kind !== 'dir') throw fsError('ENOTDIR', syscall, p);
    return parent;
  }

  #add(p: string, node: Node): void {
    const parent = this.#parentDir('open', p);
    parent.children.add(posix.basename(p));
    parent.mtimeMs = this.#now();
    this.#nodes.set(p, node);
  }

  #remove(p: string): void {
    const parent = this.#nodes.get(posix.dirname(p)) as DirNode;
    parent.children.delete(posix.basename(p));
    parent.mtimeMs = this.#now();
    this.#nodes.delete(p);
  }
}
