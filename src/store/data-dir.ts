import { randomUUID } from 'node:crypto';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { ExitCode, FatalError, describeError, mountFaultCode } from '../errors.js';
import { createExclusive } from './exclusive-create.js';
import { DIRS, Layout, MARKER_FILE } from './layout.js';
import { readJsonValidated } from './read-whole.js';

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

function dataDirError(root: string, err: unknown): FatalError {
  const fault = mountFaultCode(err);
  const code = fault === 'DISK_FULL' || fault === 'READ_ONLY' ? fault : 'DATA_DIR_UNUSABLE';
  return new FatalError(code, `data directory ${root}: ${describeError(err)}`, ExitCode.DATA_DIR, {
    cause: err,
  });
}

/** Reads the marker of a data directory, or undefined when there is none. */
export async function readMarker(layout: Layout): Promise<Marker | undefined> {
  try {
    return await readJsonValidated(layout.marker(), asMarker);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Opens the data directory for crawling, creating it (and its subdirectories and marker)
 * when needed. Refuses a non-empty directory that is not a mountcrawl data directory, so that
 * a mistyped --data never scatters files through someone's home directory. Throws FatalError
 * with a one-line message on any problem.
 */
export async function openDataDir(
  root: string,
  nodeId: string,
  normalization?: Marker['normalization'],
): Promise<{ layout: Layout; marker: Marker }> {
  const layout = new Layout(root);
  try {
    await mkdir(root, { recursive: true });
    let marker = await readMarker(layout);
    if (marker === undefined) {
      const entries = (await readdir(root)).filter((name) => !name.startsWith('.'));
      const ours = new Set<string>(Object.values(DIRS));
      const foreign = entries.filter((name) => !ours.has(name));
      if (foreign.length > 0) {
        throw new FatalError(
          'NOT_A_DATA_DIR',
          `${root} is not empty and holds no ${MARKER_FILE} marker (found ${JSON.stringify(foreign[0])}): ` +
            'choose an empty or new directory for --data',
          ExitCode.DATA_DIR,
        );
      }
      const fresh: Marker = {
        format: 'mountcrawl',
        version: 1,
        id: randomUUID(),
        createdAt: new Date().toISOString(),
        ...(normalization !== undefined ? { normalization } : {}),
      };
      await createExclusive(layout.marker(), `${JSON.stringify(fresh, null, 1)}\n`, nodeId);
      marker = await readMarker(layout);
      if (marker === undefined) throw new Error(`${MARKER_FILE} vanished right after it was created`);
    }
    await Promise.all(Object.keys(DIRS).map((name) => mkdir(layout.dir(name as keyof typeof DIRS), { recursive: true })));
    return { layout, marker };
  } catch (err) {
    if (err instanceof FatalError) throw err;
    throw dataDirError(root, err);
  }
}

/**
 * Opens an existing data directory for reading (status, locate): never creates anything.
 */
export async function openExistingDataDir(root: string): Promise<Layout> {
  const layout = new Layout(root);
  try {
    const s = await stat(root);
    if (!s.isDirectory()) throw new FatalError('DATA_DIR_UNUSABLE', `${root} is not a directory`, ExitCode.DATA_DIR);
  } catch (err) {
    if (err instanceof FatalError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new FatalError('NO_DATA_DIR', `no data directory at ${root} (run a crawl first, or pass --data)`, ExitCode.DATA_DIR);
    }
    throw dataDirError(root, err);
  }
  return layout;
}
