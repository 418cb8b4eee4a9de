import { parentPort } from 'node:worker_threads';
import { readLocalRecord } from '../store/read-record.js';
import { recordLineInto } from '../store/record-line.js';
import { asErrsRecord, asLinksRecord, ERRS_SHAPE, LINKS_SHAPE } from '../store/records.js';
import { exportDecoder } from './export-fields.js';
import type { LinesAnswer, LinesJob } from './export-threads.js';

/** First size of a job's buffer of lines: a few hundred records of a few kB; it grows for larger ones. */
const FIRST_BYTES = 512 * 1024;

/**
 * The thread of LineThreads (src/cli/export-threads.ts): reads each record of a job with
 * synchronous calls (readLocalRecord) and writes its line, as exportDecoder makes it, into one
 * buffer for the whole job (recordLineInto: no buffer of its own a line), which the answer
 * moves to the main thread, not copies.
 */
function lines(job: LinesJob): Uint8Array {
  let out = Buffer.allocUnsafeSlow(FIRST_BYTES);
  let length = 0;
  /** Makes room for `bytes` more after `length`. */
  const reserve = (bytes: number): void => {
    if (length + bytes <= out.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(out.length * 2, length + bytes));
    out.copy(bigger, 0, 0, length);
    out = bigger;
  };
  const keys = job.keys.split('\n');
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const [shape, check, dir] = i < job.firstErrs ? [LINKS_SHAPE, asLinksRecord, job.linksDir] : [ERRS_SHAPE, asErrsRecord, job.errsDir];
    // Each decoding writes its line after `length` and says how long it is; a torn record writes none.
    const read = readLocalRecord(`${dir}/${key}.json`, (bytes) => {
      reserve(bytes.length + 1);
      const end = job.fields === undefined ? recordLineInto(bytes, shape, out, length) : -1;
      if (end >= 0) return end - length;
      const line = exportDecoder(key, shape, check, job.fields)(bytes);
      reserve(line.length);
      return line.copy(out, length);
    });
    if (read.kind === 'value') length += read.value;
  }
  return new Uint8Array(out.buffer, 0, length);
}

parentPort!.on('message', (job: LinesJob) => {
  let answer: LinesAnswer;
  try {
    answer = { id: job.id, lines: lines(job) };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    answer = { id: job.id, error: { message: e.message, code: e.code } };
  }
  parentPort!.postMessage(answer, 'lines' in answer ? [answer.lines.buffer as ArrayBuffer] : []);
});
