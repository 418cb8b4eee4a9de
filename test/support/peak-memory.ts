import { readFile } from 'node:fs/promises';

/** VmHWM (peak resident set size) of a live process in bytes, from /proc; undefined when unreadable. */
export async function peakRss(pid: number): Promise<number | undefined> {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return m === null ? undefined : Number(m[1]) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * Watches a process's peak RSS until `done` settles, reading it every `everyMs`: the last
 * reading before the process exits is its peak for the whole run. Resolves with the highest
 * value read, or undefined when /proc could not be read (not Linux).
 */
export async function watchPeakRss(pid: number, done: Promise<unknown>, everyMs = 20): Promise<number | undefined> {
  let peak: number | undefined;
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    const v = await peakRss(pid);
    if (v !== undefined) peak = Math.max(peak ?? 0, v);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return peak;
}
