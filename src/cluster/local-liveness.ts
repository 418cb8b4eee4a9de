import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

let cachedBootId: string | undefined;

/**
 * Identifies this machine's current boot and PID namespace (Linux), or '' where there is
 * none: two records with the same value were written where the same pids are visible.
 */
export function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      cachedBootId = `${boot}/${readlinkSync('/proc/self/ns/pid')}`;
    } catch {
      cachedBootId = '';
    }
  }
  return cachedBootId;
}

/** True when the process `pid` exists on this machine and is not a zombie. */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * True when a node record was written by a process of this very machine (same host name and
 * boot id) that no longer runs: it is dead now, no need to wait for its counter to stop.
 * Any doubt (another machine, no /proc) answers false and liveness falls back to the counter.
 */
export function isDeadLocalProcess(record: { hostname: string; bootId: string; pid: number }): boolean {
  if (record.hostname !== hostname() || record.bootId === '' || record.bootId !== bootId()) return false;
  if (record.pid === process.pid) return false;
  return !processRunning(record.pid);
}
