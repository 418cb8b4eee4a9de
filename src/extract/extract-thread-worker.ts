import { parentPort, workerData } from 'node:worker_threads';
import { READY, type ExtractJob, type ExtractResult, type ExtractThreadData } from './extract-thread.js';
import { extractLinks } from './link-extractor.js';

const { normalize } = workerData as ExtractThreadData;

/**
 * The thread of ExtractThread (src/extract/extract-thread.ts): runs extractLinks on each page
 * of a batch and answers the batch with one message. A page it throws on is answered as
 * failed, without the error: the main thread runs extractLinks on it again, and the error it
 * gets is the one the page would have had without the thread.
 */
function extractOne(job: ExtractJob): ExtractResult {
  try {
    const links = extractLinks(job.body, job.pageUrl, job.contentType, job.truncated, normalize, { obeyRelNofollow: job.obeyRelNofollow });
    return { id: job.id, links };
  } catch (err) {
    return { id: job.id, failed: err instanceof Error ? err.message : String(err) };
  }
}

parentPort!.on('message', (jobs: readonly ExtractJob[]) => {
  parentPort!.postMessage(jobs.map(extractOne));
});
parentPort!.postMessage(READY);
