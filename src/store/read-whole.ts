import { close, open, read } from 'node:fs';

/** First read size: most records and pages fit; larger files grow the buffer. */
const FIRST_CHUNK = 16 * 1024;

/**
 * Reads a file to its end, whatever its size was said to be. Over FUSE the size may come
 * from a fresh lookup of the name while the open handle reads an older file that another
 * machine replaced (docs/protocol.md, "What the file system must give": torn reads), so the length is never trusted: reading
 * stops only at a read that returns 0 bytes.
 *
 * `shortReadEnds`: a read that returns fewer bytes than asked for is taken as the end,
 * saving one round trip. Only for callers that validate what they read (a JSON record cut
 * short does not parse, and readJsonValidated reads again when it does not).
 *
 * The callback API: one promise per file rather than a FileHandle and a promise per call
 * (reseeds read millions of records).
 */
export function readWhole(path: string, options: { shortReadEnds?: boolean } = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (openErr, fd) => {
      if (openErr !== null) {
        reject(openErr);
        return;
      }
      let buf = Buffer.allocUnsafe(FIRST_CHUNK);
      let total = 0;
      const finish = (err: Error | null): void => {
        close(fd, (closeErr) => {
          const failure = err ?? closeErr;
          if (failure !== null) reject(failure);
          else resolve(buf.subarray(0, total));
        });
      };
      const next = (): void => {
        if (total === buf.length) {
          const bigger = Buffer.allocUnsafe(buf.length * 4);
          buf.copy(bigger, 0, 0, total);
          buf = bigger;
        }
        const asked = buf.length - total;
        read(fd, buf, total, asked, null, (readErr, bytesRead) => {
          if (readErr !== null) return finish(readErr);
          total += bytesRead;
          if (bytesRead === 0 || (options.shortReadEnds === true && bytesRead < asked)) return finish(null);
          next();
        });
      };
      next();
    });
  });
}

/** How many times a file that does not validate is read before giving up (readJsonValidated and the reseed's record readers). */
export const VALIDATE_ATTEMPTS = 4;
