import { createHash } from 'node:crypto';

/**
 * The content signature of a body (as Nutch's MD5Signature): the MD5 of its bytes, hex. Two
 * fetches with the same signature count as unchanged. MD5 only tells bodies apart here; it
 * defends against nothing.
 */
export function contentSignature(body: Uint8Array): string {
  return createHash('md5').update(body).digest('hex');
}
