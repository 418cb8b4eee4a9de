import type { NodeRecord } from '../../src/cluster/node-record.js';
import { writeFileAtomic } from '../../src/store/atomic-write.js';
import type { Layout } from '../../src/store/layout.js';
import { nodeMount } from '../../src/store/mount.js';

/** A heartbeat record as a node on another machine writes it (not this hostname, not this boot), heartbeat 1 s. */
export function remoteRecord(id: string, count: number, extra: Partial<NodeRecord> = {}): NodeRecord {
  return {
    id,
    counter: count,
    state: 'crawling',
    idleEpoch: 0,
    hostname: 'elsewhere.example.org',
    pid: 4242,
    bootId: '00000000-0000-4000-8000-000000000000/pid:[4026531836]',
    heartbeatMs: 1_000,
    startedAt: '2025-01-15T12:00:00.000Z',
    updatedAt: '2025-01-15T12:00:00.000Z',
    round: 0,
    hostsOwned: 0,
    pages: 0,
    errors: 0,
    queued: 0,
    inFlight: 0,
    rate: 0,
    ...extra,
  };
}

/** Writes a node's record into nodes/ as its node would (whole, by rename). */
export async function writeRecord(layout: Layout, record: NodeRecord): Promise<void> {
  await writeFileAtomic(nodeMount, layout.node(record.id), `${JSON.stringify(record)}\n`, { nodeId: record.id, fsync: false });
}
