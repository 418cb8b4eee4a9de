import { statfs } from 'node:fs/promises';

/**
 * Kinds of file system (statfs f_type, Linux) on which every path lookup asks a server:
 * FUSE (sshfs), NFS, SMB/CIFS (two magics), 9P.
 */
const NETWORK_FS = new Set([0x65735546, 0x6969, 0xfe534d42, 0xff534d42, 0x01021997]);

/** Local disks and memory: ext2/3/4, XFS, Btrfs, tmpfs, overlayfs, ZFS, F2FS. */
const LOCAL_FS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010]);

/**
 * What the data directory is on, for how a node makes its page writes: `network` (DirHandles:
 * fewer lookups on the server), `local` (WriteThread: fewer hand-offs between threads), or
 * `other` (a cluster file system or one not known here, another system than Linux, or a
 * directory that cannot be read: plain calls through libuv's pool, which suit any of them).
 */
export async function fileSystemKind(dir: string): Promise<'network' | 'local' | 'other'> {
  if (process.platform !== 'linux') return 'other';
  try {
    const { type } = await statfs(dir);
    return NETWORK_FS.has(type) ? 'network' : LOCAL_FS.has(type) ? 'local' : 'other';
  } catch {
    return 'other';
  }
}
