import { dirname, join } from 'node:path';
import { ExitCode, FatalError, describeError, mountFaultCode } from '../errors.js';
import { createExclusive } from './exclusive-create.js';
import { DIRS, LATER_DIRS, Layout, MARKER_FILE } from './layout.js';
import type { MountFs } from './mount-fs.js';
import { type Mount, nodeMount } from './mount.js';
import { readRecord } from './read-record.js';

/** Content of the marker file written when a data directory is created. */
export interface Marker {
  readonly format: 'mountcrawl';
  readonly version: number;
  /** Random id: a node that finds another id (or none) knows the mount changed under it. */
  readonly id: string;
  readonly createdAt: string;
  /**
   * The URL normalization every node of this data directory uses (docs/url-keys.md): keys
   * depend on it, so it is fixed when the directory is created.
   */
  readonly normalization?: { readonly version: number; readonly sessionParams: readonly string[] };
}

function asMarker(value: unknown): Marker {
  const m = value as Partial<Marker> | null;
  if (m === null || typeof m !== 'object' || m.format !== 'mountcrawl' || typeof m.id !== 'string') {
    throw new TypeError('not a mountcrawl marker');
  }
  return m as Marker;
}

/** The one-line error for a data directory that fails: its own code for "cannot be written". */
function dataDirError(root: string, err: unknown, where: string = root): FatalError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EACCES' || code === 'EPERM') {
    const uid = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
    return new FatalError(
      'DATA_DIR_NOT_WRITABLE',
      `data directory ${root} cannot be written by this user${uid}: ${code} on ${where}`,
      ExitCode.DATA_DIR_NOT_WRITABLE,
      { cause: err },
    );
  }
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    return new FatalError('DATA_DIR_UNUSABLE', `${root} is not a directory (or a part of its path is a file)`, ExitCode.DATA_DIR, {
      cause: err,
    });
  }
  const fault = mountFaultCode(err);
  const kind = fault === 'DISK_FULL' || fault === 'READ_ONLY' ? fault : 'DATA_DIR_UNUSABLE';
  return new FatalError(kind, `data directory ${root}: ${describeError(err)}`, ExitCode.DATA_DIR, { cause: err });
}

/** Reads the marker of a data directory, or undefined when there is none. */
export async function readMarker(layout: Layout): Promise<Marker | undefined> {
  const read = await readRecord(layout.mount, layout.marker(), asMarker);
  if (read.kind === 'torn') throw read.error;
  return read.kind === 'value' ? read.value : undefined;
}

/** What a data directory is for a command that is about to use it. */
export interface CheckedDataDir {
  readonly layout: Layout;
  /** Undefined only for `read` of a directory that is empty (or holds only our folders). */
  readonly marker: Marker | undefined;
}

/**
 * The one check every command makes of its data directory (docs/errors.md):
 *
 * - `read` (status, locate, export): it must exist (NO_DATA_DIR), be a directory
 *   (DATA_DIR_UNUSABLE), and be a mountcrawl data directory or empty (NOT_A_DATA_DIR);
 *   nothing is created.
 * - `write` (crawl, seed, the supervisor): the same, except that a missing directory is
 *   created with its folders and marker; then one small file is written and removed in the
 *   directory and in each of its folders, so that one that cannot be written is reported at
 *   once, naming it (DATA_DIR_NOT_WRITABLE), and not by the first heartbeat.
 *
 * Throws FatalError with a one-line message for every problem. `mount`: the file system it is
 * on (the real one by default).
 */
export async function checkDataDir(
  root: string,
  mode: 'read' | 'write',
  options: { nodeId?: string; normalization?: Marker['normalization']; mount?: Mount } = {},
): Promise<CheckedDataDir> {
  const mount = options.mount ?? nodeMount;
  const { fs } = mount;
  const layout = new Layout(root, mount);
  const nodeId = options.nodeId ?? `pid-${process.pid}`;
  try {
    let exists = true;
    try {
      if (!(await fs.stat(root)).isDirectory()) throw new FatalError('DATA_DIR_UNUSABLE', `${root} is not a directory`, ExitCode.DATA_DIR);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      exists = false;
    }
    if (!exists) {
      if (mode === 'read') {
        throw new FatalError('NO_DATA_DIR', `no data directory at ${root} (run a crawl first, or pass --data)`, ExitCode.DATA_DIR);
      }
      await makeDirectory(fs, root);
    }
    let marker = await readMarker(layout);
    if (marker === undefined) {
      const ours = new Set<string>([...Object.values(DIRS), ...LATER_DIRS]);
      const foreign = (await fs.readdir(root)).filter((name) => !name.startsWith('.') && !ours.has(name));
      // Another node may have made the marker, and written in the directory, since it was read.
      if (foreign.length > 0) marker = await readMarker(layout);
      if (marker === undefined && foreign.length > 0) {
        throw new FatalError(
          'NOT_A_DATA_DIR',
          `${root} is not empty and holds no ${MARKER_FILE} marker (found ${JSON.stringify(foreign[0])}): ` +
            (mode === 'write' ? 'choose an empty or new directory for --data' : 'it is not a mountcrawl data directory'),
          ExitCode.DATA_DIR,
        );
      }
    }
    if (marker === undefined) {
      if (mode === 'read') return { layout, marker: undefined };
      const fresh: Marker = {
        format: 'mountcrawl',
        version: 1,
        id: mount.newId(),
        createdAt: new Date(mount.clock.now()).toISOString(),
        ...(options.normalization !== undefined ? { normalization: options.normalization } : {}),
      };
      await createExclusive(mount, layout.marker(), `${JSON.stringify(fresh, null, 1)}\n`, nodeId).catch((err) => {
        throw dataDirError(root, err, layout.marker());
      });
      marker = await readMarker(layout);
      if (marker === undefined) throw new Error(`${MARKER_FILE} vanished right after it was created`);
    }
    if (mode === 'write') {
      for (const name of Object.keys(DIRS) as (keyof typeof DIRS)[]) {
        await fs.mkdir(layout.dir(name), { recursive: true }).catch((err) => {
          throw dataDirError(root, err, layout.dir(name));
        });
      }
      await probeWritable(mount, root, [root, ...Object.keys(DIRS).map((n) => layout.dir(n as keyof typeof DIRS))], nodeId);
    }
    return { layout, marker };
  } catch (err) {
    if (err instanceof FatalError) throw err;
    throw dataDirError(root, err);
  }
}

/**
 * `mkdir -p` with each missing level tried once. Node's own recursive mkdir loops forever
 * where mkdir answers ENOENT under a parent that exists (a pseudo file system such as /proc:
 * `--data /proc/nope` spun through thousands of mkdir calls a second and never returned).
 */
async function makeDirectory(fs: MountFs, path: string): Promise<void> {
  try {
    await fs.mkdir(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = dirname(path);
    if (code !== 'ENOENT' || parent === path) throw err;
    await makeDirectory(fs, parent);
    await fs.mkdir(path).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}

/** Writes and removes one small temporary file in each directory; throws DATA_DIR_NOT_WRITABLE (or another data-directory error) naming the first that fails. */
async function probeWritable(mount: Mount, root: string, dirs: readonly string[], nodeId: string): Promise<void> {
  const { fs } = mount;
  for (const dir of dirs) {
    const probe = mount.nextTempPath(join(dir, 'write-check'), nodeId);
    try {
      await fs.writeNew(probe, '');
      await fs.unlink(probe);
    } catch (err) {
      await fs.unlink(probe).catch(() => undefined);
      throw dataDirError(root, err, dir);
    }
  }
}

/**
 * Opens the data directory for crawling, creating it (and its subdirectories and marker)
 * when needed (checkDataDir in `write` mode). Refuses a non-empty directory that is not a
 * mountcrawl data directory, so that a mistyped --data never scatters files through someone's
 * home directory. `mount`: the file system it is on (the real one by default).
 */
export async function openDataDir(
  root: string,
  nodeId: string,
  normalization?: Marker['normalization'],
  mount: Mount = nodeMount,
): Promise<{ layout: Layout; marker: Marker }> {
  const { layout, marker } = await checkDataDir(root, 'write', {
    nodeId,
    mount,
    ...(normalization !== undefined ? { normalization } : {}),
  });
  return { layout, marker: marker! };
}

/** Opens an existing data directory for reading (status, locate, export): never creates anything. */
export async function openExistingDataDir(root: string): Promise<Layout> {
  return (await checkDataDir(root, 'read')).layout;
}
