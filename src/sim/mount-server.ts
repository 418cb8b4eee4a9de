import { posix } from 'node:path';
import type { MountStat } from '../store/mount-fs.js';

/** A file's contents as the server holds them; two names may share one (link). */
interface FileNode {
  readonly kind: 'file';
  data: Buffer;
  mtimeMs: number;
  readonly ino: number;
}

interface DirNode {
  readonly kind: 'dir';
  /** Names in the order they were made: what a listing returns (no order is promised by a real one). */
  readonly names: Set<string>;
  mtimeMs: number;
}

type Node = FileNode | DirNode;

/** An error as node's fs gives it: `code`, and the call and path in the message. */
export function fsError(code: string, call: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated, ${call} '${path}'`), { code, syscall: call, path });
}

/** What a mistake in the server may be, to show that the simulator catches what it breaks (docs/simulator.md). */
export interface ServerMutation {
  /** `link` onto an existing name replaces it instead of failing: exclusive create is broken. */
  readonly linkReplaces?: boolean;
}

/**
 * The file server of a simulated mount (docs/simulator.md): one namespace that every node
 * sees, each operation decided atomically when it reaches the server, as docs/protocol.md
 * ("What the file system must give") says a real one does: rename replaces atomically, link
 * and exclusive create are granted to one caller. Time of modification is the server's own
 * clock (`wall`). No latency, caches or faults here: those are each node's view (MountView).
 */
export class MountServer {
  readonly #nodes = new Map<string, Node>();
  readonly #wall: () => number;
  readonly #mutation: ServerMutation;
  #ino = 1;

  constructor(root: string, wall: () => number, mutation: ServerMutation = {}) {
    this.#wall = wall;
    this.#mutation = mutation;
    this.#nodes.set('/', { kind: 'dir', names: new Set(), mtimeMs: wall() });
    this.mkdir(root, true);
  }

  /** The file or directory at `path`, undefined when none. */
  lookup(path: string): { readonly kind: 'file' | 'dir'; readonly ino: number } | undefined {
    const n = this.#nodes.get(norm(path));
    return n === undefined ? undefined : { kind: n.kind, ino: n.kind === 'file' ? n.ino : 0 };
  }

  readFile(path: string): { data: Buffer; ino: number } {
    const n = this.#get(path, 'open');
    if (n.kind !== 'file') throw fsError('EISDIR', 'read', path);
    return { data: n.data, ino: n.ino };
  }

  /** Makes `path` (EEXIST when it exists) holding the first `written` bytes of `data` (all by default). */
  writeNew(path: string, data: Buffer, written = data.length): void {
    const p = norm(path);
    if (this.#nodes.has(p)) throw fsError('EEXIST', 'open', path);
    const dir = this.#parent(p, 'open');
    this.#nodes.set(p, { kind: 'file', data: Buffer.from(data.subarray(0, written)), mtimeMs: this.#wall(), ino: this.#ino++ });
    this.#added(dir, p);
  }

  rename(from: string, to: string): void {
    const f = norm(from);
    const t = norm(to);
    const n = this.#get(f, 'rename');
    const dest = this.#nodes.get(t);
    if (dest?.kind === 'dir') {
      if (n.kind !== 'dir') throw fsError('EISDIR', 'rename', to);
      if (dest.names.size > 0) throw fsError('ENOTEMPTY', 'rename', to);
    } else if (dest !== undefined && n.kind === 'dir') throw fsError('ENOTDIR', 'rename', to);
    if (f === t) return;
    const toDir = this.#parent(t, 'rename');
    const moved = [...this.#nodes.keys()].filter((k) => k === f || k.startsWith(`${f}/`));
    if (n.kind === 'dir' && moved.length > 1) {
      for (const k of moved) {
        if (k === f) continue;
        const node = this.#nodes.get(k)!;
        this.#nodes.delete(k);
        this.#nodes.set(t + k.slice(f.length), node);
      }
    }
    this.#nodes.delete(f);
    this.#removed(this.#nodes.get(posix.dirname(f)) as DirNode, f);
    if (dest !== undefined) toDir.names.delete(posix.basename(t));
    this.#nodes.set(t, n);
    this.#added(toDir, t);
  }

  link(existing: string, newPath: string, sshfs: boolean): void {
    const n = this.#get(existing, 'link');
    if (n.kind !== 'file') throw fsError('EPERM', 'link', existing);
    const t = norm(newPath);
    const dir = this.#parent(t, 'link');
    if (this.#nodes.has(t)) {
      if (this.#mutation.linkReplaces !== true || this.#nodes.get(t)!.kind !== 'file') {
        throw fsError(sshfs ? 'EPERM' : 'EEXIST', 'link', newPath);
      }
      dir.names.delete(posix.basename(t));
    }
    this.#nodes.set(t, n);
    this.#added(dir, t);
  }

  unlink(path: string): void {
    const p = norm(path);
    const n = this.#get(p, 'unlink');
    if (n.kind === 'dir') throw fsError('EISDIR', 'unlink', path);
    this.#nodes.delete(p);
    this.#removed(this.#nodes.get(posix.dirname(p)) as DirNode, p);
  }

  mkdir(path: string, recursive: boolean): void {
    const p = norm(path);
    const n = this.#nodes.get(p);
    if (n !== undefined) {
      if (recursive && n.kind === 'dir') return;
      throw fsError('EEXIST', 'mkdir', path);
    }
    const parent = posix.dirname(p);
    if (recursive && !this.#nodes.has(parent)) this.mkdir(parent, true);
    const dir = this.#parent(p, 'mkdir');
    this.#nodes.set(p, { kind: 'dir', names: new Set(), mtimeMs: this.#wall() });
    this.#added(dir, p);
  }

  rmdir(path: string): void {
    const p = norm(path);
    const n = this.#get(p, 'rmdir');
    if (n.kind !== 'dir') throw fsError('ENOTDIR', 'rmdir', path);
    if (n.names.size > 0) throw fsError('ENOTEMPTY', 'rmdir', path);
    this.#nodes.delete(p);
    this.#removed(this.#nodes.get(posix.dirname(p)) as DirNode, p);
  }

  readdir(path: string): string[] {
    const n = this.#get(path, 'scandir');
    if (n.kind !== 'dir') throw fsError('ENOTDIR', 'scandir', path);
    return [...n.names];
  }

  stat(path: string): MountStat {
    const n = this.#get(path, 'stat');
    const size = n.kind === 'file' ? n.data.length : 4096;
    const dir = n.kind === 'dir';
    return { size, mtimeMs: n.mtimeMs, isDirectory: () => dir, isFile: () => !dir };
  }

  /** Every file under `dir`, its path relative to `dir`, with its contents (never changed in place): what the end of a run checks. */
  files(dir: string): { path: string; data: Buffer }[] {
    const prefix = `${norm(dir)}/`;
    const out: { path: string; data: Buffer }[] = [];
    for (const [p, n] of this.#nodes)
      if (n.kind === 'file' && p.startsWith(prefix)) out.push({ path: p.slice(prefix.length), data: n.data });
    return out;
  }

  #get(path: string, call: string): Node {
    const n = this.#nodes.get(norm(path));
    if (n === undefined) throw fsError('ENOENT', call, path);
    return n;
  }

  #parent(p: string, call: string): DirNode {
    const d = this.#nodes.get(posix.dirname(p));
    if (d === undefined) throw fsError('ENOENT', call, p);
    if (d.kind !== 'dir') throw fsError('ENOTDIR', call, p);
    return d;
  }

  #added(dir: DirNode, p: string): void {
    dir.names.add(posix.basename(p));
    dir.mtimeMs = this.#wall();
  }

  #removed(dir: DirNode | undefined, p: string): void {
    if (dir === undefined) return;
    dir.names.delete(posix.basename(p));
    dir.mtimeMs = this.#wall();
  }
}

function norm(path: string): string {
  const p = posix.normalize(path);
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}
