import { hash } from 'node:crypto';

/** Length of a key: SHA-224 in lowercase hex. */
export const KEY_LENGTH = 56;

const KEY_PATTERN = /^[0-9a-f]{56}$/;

/**
 * The key of a normalized URL (docs/url-keys.md): lowercase hex SHA-224 of its UTF-8 bytes. Part of
 * the on-disk contract: the same URL always has the same key on every node and every version.
 */
export function urlKey(normalizedUrl: string): string {
  // crypto.hash (one shot, no Hash object) is about twice as fast as createHash here; a
  // reseed hashes every link of every record it reads. A string is hashed as UTF-8.
  return hash('sha224', normalizedUrl, 'hex');
}

/** True for a string that has the shape of a key (used on file names read from the mount). */
export function isKey(s: string): boolean {
  return KEY_PATTERN.test(s);
}
