import { open } from 'node:fs/promises';

/** First read size: most records and pages fit; larger files grow the buffer. */
const FIRST_CHUNK = 16 * 1024;

/**
 * Reads a file to its end, whatever its size was said to be. Over FUSE the size may come
 * from a fresh lookup of the name while the open handle reads an older file that another
 * machine replaced (mount/FINDINGS: torn reads), so the length is never trusted: reading
 * stops only at a read that returns 0 bytes.
 */
export async function readWhole(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    let buf = Buffer.allocUnsafe(FIRST_CHUNK);
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 4);
        buf.copy(bigger, 0, 0, total);
        buf = bigger;
      }
      const { bytesRead } = await handle.read(buf, total, buf.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    return buf.subarray(0, total);
  } finally {
    await handle.close();
  }
}

/** How many times a file that does not validate is read again before giving up. */
const VALIDATE_ATTEMPTS = 4;

/**
 * Reads a JSON file that another node may replace at any moment, and returns what `check`
 * makes of the parsed value. A read that does not parse or does not pass `check` is retried
 * (a torn read over FUSE), a few times with a short pause; then the last error is thrown.
 * ENOENT is thrown at once (the file is gone: the caller decides what that means).
 */
export async function readJsonValidated<T>(path: string, check: (value: unknown) => T): Promise<T> {
  let lastError: unknown;
  for (let attempt = 0; attempt < VALIDATE_ATTEMPTS; attempt++) {
    const bytes = await readWhole(path);
    try {
      return check(JSON.parse(bytes.toString('utf8')));
    } catch (err) {
      lastError = err;
      await new Promise((resolve) => setTimeout(resolve, 5 * (attempt + 1)));
    }
  }
  throw lastError;
}
