import { unlink as unlinkCb } from 'node:fs';
import { link, mkdir, open, readdir, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import type { MountFs } from './mount-fs.js';
import { readWhole } from './read-whole.js';

/** writeNew with fsync: the file flushed before it is closed. */
async function writeNewFlushed(path: string, data: string | Uint8Array): Promise<void> {
  const file = await open(path, 'wx');
  try {
    await file.writeFile(data);
    await file.sync();
  } finally {
    await file.close();
  }
}

/**
 * The real file system (node's fs: a local disk, NFS or sshfs). Each method calls node's
 * function when it is called, not a copy taken when this module loaded, so that a test that
 * replaces one (test/support/fs-hook.ts) sees the calls made through it.
 */
export const nodeMountFs: MountFs = Object.freeze({
  readFile: (path: string) => readWhole(path),
  writeNew: (path: string, data: string | Uint8Array, options?: { readonly fsync?: boolean }) =>
    options?.fsync === true ? writeNewFlushed(path, data) : writeFile(path, data, { flag: 'wx' }),
  rename: (from: string, to: string) => rename(from, to),
  link: (existing: string, newPath: string) => link(existing, newPath),
  // The callback API, as the atomic write's clean-up has always used.
  unlink: (path: string) => new Promise<void>((resolve, reject) => unlinkCb(path, (err) => (err === null ? resolve() : reject(err)))),
  mkdir: async (path: string, options?: { readonly recursive?: boolean }) => {
    await mkdir(path, options);
  },
  rmdir: (path: string) => rmdir(path),
  readdir: (path: string) => readdir(path),
  stat: (path: string) => stat(path),
});
