import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { ownBytes, type WriteAnswer, type WriteFailure, type WriteJob, type WriteResult, type WriteThreadData } from './write-thread.js';

const ring = Buffer.from((workerData as WriteThreadData).ring);

/**
 * The thread of WriteThread (src/store/write-thread.ts): makes each atomic write of a batch
 * with synchronous calls (create the temporary file exclusively, write, close, rename) and
 * answers the batch with one message. Removing a failed write's temporary file is left to
 * the caller, as with the asynchronous writes.
 */
function writeOne(job: WriteJob): WriteFailure | undefined {
  let fd: number;
  try {
    fd = openSync(job.tmp, 'wx', 0o666);
  } catch (err) {
    return failure('open', err);
  }
  const [bytes, start, end] = 'data' in job ? [job.data, 0, job.data.length] : [ring, job.start, job.start + job.length];
  try {
    for (let offset = start; offset < end; ) offset += writeSync(fd, bytes, offset, end - offset);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // The write's error is the one to report.
    }
    return failure('write', err);
  }
  try {
    closeSync(fd);
  } catch (err) {
    return failure('close', err);
  }
  try {
    renameSync(job.tmp, job.path);
  } catch (err) {
    return failure('rename', err);
  }
  return undefined;
}

function failure(step: WriteFailure['step'], err: unknown): WriteFailure {
  const e = err as NodeJS.ErrnoException & { dest?: string };
  return { step, message: e.message, code: e.code, errno: e.errno, syscall: e.syscall, path: e.path, dest: e.dest };
}

/** The answer of a job whose earlier job was not made (WriteJob.after). */
const SKIPPED: WriteFailure = { step: 'skipped', message: 'not written: the file before it was not' };

parentPort!.on('message', (jobs: readonly WriteJob[]) => {
  const notMade = new Set<number>();
  const results: WriteResult[] = jobs.map((job) => {
    const outcome = job.after !== undefined && notMade.has(job.after) ? SKIPPED : writeOne(job);
    if (outcome !== undefined) notMade.add(job.id);
    return { id: job.id, failure: outcome };
  });
  // Bytes that came in buffers of their own go back with the answer: this thread makes almost
  // no garbage, so its collector would run only after tens of megabytes of them had piled up;
  // the main thread collects often.
  const bodies = ownBytes(jobs);
  parentPort!.postMessage({ results, bodies } satisfies WriteAnswer, bodies);
});
