import { hostname } from 'node:os';
import { createExclusive } from '../store/exclusive-create.js';
import { takeoverClaimPath, type Layout } from '../store/layout.js';
import { readJsonValidated, readRecord } from '../store/read-record.js';
import { mapLimit } from '../util/map-limit.js';
import { LeaseAside } from './lease-aside.js';
import { bootId, isDeadLocalProcess } from './local-liveness.js';

/** Leases read back (verify) or released (releaseAll) at once: each is a few round trips on a network mount. */
const LEASE_PARALLELISM = 32;
/** A routine heartbeat reads back each held lease once in this many heartbeats... */
export const LEASE_READ_TURN = 5;
/** ...but at most this many a heartbeat: with 2,000 hosts, each lease every 63 heartbeats. */
export const LEASE_READS_PER_BEAT = 32;

/** Content of hosts/<host>.lease. */
export interface LeaseRecord {
  readonly node: string;
  readonly host: string;
  /** Random per acquisition: tells this lease from an earlier one of the same node id. */
  readonly token: string;
  readonly acquiredAt: string;
  /** Where the holder runs, so a restart on the same machine can tell its holder is dead. */
  readonly hostname?: string;
  readonly pid?: number;
  readonly bootId?: string;
  /** The holder's process (NodeRecord.incarnation): a lease of an earlier process of a node id that runs again is stale. */
  readonly incarnation?: string;
}

/** Which process runs a node id now (Membership): a lease names the process that took it. */
export interface NodeProcesses {
  /** This node's process. */
  readonly incarnation: string;
  /**
   * True when `nodeId` runs now in another process than `incarnation`: its record, read now (after the lease that names
   * `incarnation`; a process writes its record before it takes a lease), names another (Membership.replaced).
   */
  replaced(nodeId: string, incarnation: string): Promise<boolean>;
  /**
   * True when `nodeId`, which this node's view counts dead, wrote its record since that view was read (it started again,
   * or came back): read now, before a lease of it is taken over on that view (Membership.cameBack).
   */
  cameBack(nodeId: string): Promise<boolean>;
}

function asLeaseRecord(value: unknown): LeaseRecord {
  const r = value as Partial<LeaseRecord> | null;
  if (r === null || typeof r !== 'object' || typeof r.node !== 'string' || typeof r.token !== 'string') {
    throw new TypeError('not a lease');
  }
  return r as LeaseRecord;
}

export type AcquireResult = { readonly ok: true; readonly tookOver?: string } | { readonly ok: false; readonly holder: string };

/** Errors after which an operation on the mount may or may not have happened (docs/protocol.md, "What the file system must give"). */
const UNCERTAIN = new Set(['EIO', 'ECONNABORTED', 'ETIMEDOUT', 'ESTALE', 'ECONNRESET']);

/**
 * Host leases on the mount (docs/protocol.md, "Who crawls what"). A lease is taken by an exclusive
 * create (link of a complete temp file), so exactly one node gets it; a lease whose holder is
 * dead is first renamed aside to a name of the taker's own, which only one renamer can do,
 * and checked to be the one that was judged dead before it is removed. Every path that may
 * have raced (EIO, EPERM over sshfs) is settled by reading the lease back.
 */
export class Leases {
  readonly #layout: Layout;
  readonly #nodeId: string;
  readonly #isAlive: (nodeId: string) => boolean;
  readonly #processes: NodeProcesses | undefined;
  readonly #held = new Map<string, string>(); // host dir -> token
  /** Leases being released: moved aside before they are forgotten, so verify does not judge them. */
  readonly #releasing = new Set<string>();
  /** Held hosts whose lease a routine heartbeat has not read back yet in this turn (next last). */
  #readTurn: string[] = [];
  /** Takeover claims this node made, by host dir: removed when it gives the host up gracefully. */
  readonly #claims = new Map<string, string>();
  /** Leases moved aside to be removed (a stale one taken over, this node's own released). */
  readonly #aside: LeaseAside<LeaseRecord>;

  constructor(layout: Layout, nodeId: string, isAlive: (nodeId: string) => boolean, processes?: NodeProcesses) {
    this.#layout = layout;
    this.#nodeId = nodeId;
    this.#isAlive = isAlive;
    this.#processes = processes;
    this.#aside = new LeaseAside(layout.mount, (path) => readJsonValidated(layout.mount, path, asLeaseRecord));
  }

  /** Host dirs whose lease this node holds. */
  held(): IterableIterator<string> {
    return this.#held.keys();
  }

  holds(hostDir: string): boolean {
    return this.#held.has(hostDir);
  }

  /** Reads a lease, or undefined when there is none. */
  async read(hostDir: string): Promise<LeaseRecord | undefined> {
    const read = await readRecord(this.#layout.mount, this.#layout.lease(hostDir), asLeaseRecord);
    if (read.kind === 'torn') throw read.error;
    return read.kind === 'value' ? read.value : undefined;
  }

  /**
   * Tries to take the lease of a host. Fails (without waiting) when a live node holds it;
   * takes it over when its holder is dead, or is an earlier process of this node id or of a
   * node id that runs again in another process.
   */
  async acquire(hostDir: string): Promise<AcquireResult> {
    if (this.#held.has(hostDir)) return { ok: true };
    const path = this.#layout.lease(hostDir);
    const { mount } = this.#layout;
    let tookOver: string | undefined;
    await this.#aside.settle(hostDir); // a stale lease a failed rename may have moved: removed (or put back) first
    for (let attempt = 0; attempt < 3; attempt++) {
      const token = mount.newId();
      const record: LeaseRecord = {
        node: this.#nodeId,
        host: hostDir,
        token,
        acquiredAt: new Date(mount.clock.now()).toISOString(),
        hostname: hostname(),
        pid: process.pid,
        bootId: bootId(),
        ...(this.#processes && { incarnation: this.#processes.incarnation }),
      };
      let created = false;
      try {
        created = await createExclusive(mount, path, `${JSON.stringify(record)}\n`, this.#nodeId);
      } catch (err) {
        // EIO and the like: the link may have happened on the server anyway; read back below.
        if (!UNCERTAIN.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      }
      // Created, and the read back fails: the lease is this node's all the same. Held, so that a
      // release takes it away, not left on the mount in the name of a live node.
      const current = await this.read(hostDir).catch((err: unknown) => {
        if (created) this.#held.set(hostDir, token);
        throw err;
      });
      if (current?.node === this.#nodeId && current.token === token) {
        this.#held.set(hostDir, token);
        return tookOver === undefined ? { ok: true } : { ok: true, tookOver };
      }
      if (created && current === undefined) continue; // removed in between: try again
      if (current === undefined) continue;
      const stale =
        current.node === this.#nodeId ||
        (current.pid !== undefined && isDeadLocalProcess(current as Required<LeaseRecord>)) ||
        (!this.#isAlive(current.node) && !(await this.#processes?.cameBack(current.node))) ||
        (await this.#earlierProcess(current));
      if (!stale) return { ok: false, holder: current.node };
      // Only one node may take over a given stale lease: the one that creates its takeover
      // claim. Others (whose view of who is alive briefly differs) try again later, so none
      // can move aside the lease the winner has just created.
      const claim = await this.#claimTakeover(hostDir, current);
      if (claim === undefined) return { ok: false, holder: current.node };
      this.#claims.set(hostDir, claim);
      if (await this.#aside.removeIfUnchanged(hostDir, path, current, this.#nodeId)) tookOver = current.node;
    }
    const current = await this.read(hostDir);
    return { ok: false, holder: current?.node ?? 'unknown' };
  }

  /**
   * A lease of a node id that runs again in another process (restarted within --dead-after, so
   * never counted dead): the new process does not know it holds it and, when the host is not
   * its own by rendezvous, would never let it go; the host's owner would wait for good.
   */
  async #earlierProcess(lease: LeaseRecord): Promise<boolean> {
    return lease.incarnation !== undefined && this.#processes !== undefined && this.#processes.replaced(lease.node, lease.incarnation);
  }

  /**
   * Creates, exclusively, the claim to take over one stale lease (named after its token): its
   * path for exactly one caller. The claim stays while the taker holds the host, so that a
   * slow node cannot claim the same stale lease again after the taker replaced it; it goes
   * when the taker gives the host up gracefully, or with the temp sweeper if the taker dies.
   */
  async #claimTakeover(hostDir: string, stale: LeaseRecord): Promise<string | undefined> {
    const claim = takeoverClaimPath(this.#layout.lease(hostDir), stale.token);
    const won = await createExclusive(
      this.#layout.mount,
      claim,
      `${JSON.stringify({ node: this.#nodeId, stale: stale.token })}\n`,
      this.#nodeId,
    );
    return won ? claim : undefined;
  }

  /**
   * Gives a lease up (graceful hand-over or exit). Never removes a lease that is not ours: it
   * is read first, and only if it is still ours is it moved aside (and checked again). A
   * release that fails (the mount) keeps the lease held, so that it is released again
   * (HostKeeper.releaseOrphanLeases): forgotten, it would stay on the mount in the name of a
   * live node, and the host's owner would wait for it for good.
   */
  async release(hostDir: string): Promise<void> {
    const token = this.#held.get(hostDir);
    const claim = this.#claims.get(hostDir);
    if (token !== undefined) {
      this.#releasing.add(hostDir);
      try {
        // A release whose rename failed may have moved the lease aside already: settled first.
        const current = (await this.#aside.settle(hostDir)) === undefined ? await this.read(hostDir) : undefined;
        if (current?.node === this.#nodeId && current.token === token)
          await this.#aside.removeIfUnchanged(hostDir, this.#layout.lease(hostDir), current, this.#nodeId);
      } finally {
        this.#releasing.delete(hostDir);
      }
    }
    this.#held.delete(hostDir);
    this.#claims.delete(hostDir);
    if (claim !== undefined) await this.#layout.mount.temps.remove(claim);
  }

  /**
   * Gives up every lease this node holds (its exit), several at once: each release is a
   * read, a rename and a read over the mount, and one after another 100 leases took 3.3 s
   * of a node's exit over sshfs (docs/benchmarks-log.md, "The start and end of a node over sshfs"). Best
   * effort: a release that fails leaves the lease to be taken over after --dead-after.
   */
  async releaseAll(): Promise<void> {
    await mapLimit([...this.#held.keys()], LEASE_PARALLELISM, (hostDir) => this.release(hostDir).catch(() => undefined));
  }

  /** Forgets a lease without touching the mount (it was found lost). */
  forget(hostDir: string): void {
    this.#held.delete(hostDir);
    this.#claims.delete(hostDir);
  }

  /**
   * Checks the leases this node holds: one listing of hosts/ finds leases that vanished, and
   * held leases are read to catch one that another node holds now. `read`: `all` of them
   * (after a change of the live set, or when this node may have been counted dead), `some`
   * (a routine heartbeat: the next ones in turn, so that each is read every LEASE_READ_TURN
   * heartbeats, but at most LEASE_READS_PER_BEAT a beat: with thousands of hosts a routine
   * heartbeat does not read thousands of files, docs/protocol.md "Who crawls what"), or
   * `none`. A lease being released is not judged: it vanishes from the listing before it is
   * forgotten, and a heartbeat that counted it lost made its node reseed fully for nothing.
   * Returns the hosts lost (already forgotten).
   */
  async verify(read: 'all' | 'some' | 'none'): Promise<string[]> {
    if (this.#held.size === 0) return [];
    // Only leases held before the listing was read can be judged by it: one taken while the
    // listing was in progress may be missing from it.
    const before = new Map(this.#held);
    const names = new Set(await this.#layout.fs.readdir(this.#layout.dir('hosts')));
    const lost: string[] = [];
    const toRead: [string, string][] = [];
    const judged = (hostDir: string, token: string): boolean => this.#held.get(hostDir) === token && !this.#releasing.has(hostDir);
    for (const [hostDir, token] of before) {
      if (!judged(hostDir, token)) continue;
      if (!names.has(`${hostDir}.lease`)) lost.push(hostDir);
      else if (read === 'all') toRead.push([hostDir, token]);
    }
    if (read === 'some') {
      const n = Math.min(LEASE_READS_PER_BEAT, Math.ceil(before.size / LEASE_READ_TURN));
      while (toRead.length < n) {
        if (this.#readTurn.length === 0) this.#readTurn = [...this.#held.keys()].reverse();
        const hostDir = this.#readTurn.pop()!;
        const token = this.#held.get(hostDir);
        if (token !== undefined && before.get(hostDir) === token && !lost.includes(hostDir)) toRead.push([hostDir, token]);
        if (this.#readTurn.length === 0) break; // one full turn per beat at most
      }
    }
    // In parallel: one by one, 200 leases over a mount with a few ms per round trip took
    // longer than --dead-after / 2, and a heartbeat that slow fences its own node.
    await mapLimit(toRead, LEASE_PARALLELISM, async ([hostDir, token]) => {
      const current = await this.read(hostDir);
      if (!judged(hostDir, token)) return;
      if (current === undefined || current.node !== this.#nodeId || current.token !== token) lost.push(hostDir);
    });
    for (const h of lost) this.#held.delete(h);
    return lost;
  }
}
