import type { Clock } from '../config/clock.js';
import { type Layout } from '../store/layout.js';
import { tempOwner } from '../store/temp-names.js';
import { join } from 'node:path';
import { readJsonValidated, readRecord } from '../store/read-record.js';
import { isDeadLocalProcess } from './local-liveness.js';
import { asNodeRecord, type NodeRecord, type NodeState } from './node-record.js';
import { SelfRecord, type SelfRecordDeps, type SelfStatus } from './self-record.js';
import { allIdleSince, lastBusyPeers, peersSettledIn, peersWroteAfter, seePeer, viewKey, type Peer } from './peer-liveness.js';

export interface MembershipOptions {
  readonly nodeId: string;
  readonly heartbeatMs: number;
  readonly deadAfterMs: number;
}

/**
 * Node liveness without comparing clocks (docs/protocol.md, "Nodes and liveness"). This node rewrites nodes/<id>.json with
 * a counter that grows at every beat; it counts another node alive while that node's counter
 * keeps changing, timed by this node's own monotonic clock. A record written by a process of
 * this same machine that no longer runs is dead at once. Records of nodes dead for twice the
 * dead-after time are removed.
 */
export class Membership {
  readonly #layout: Layout;
  readonly #options: MembershipOptions;
  readonly #clock: Clock;
  readonly #peers = new Map<string, Peer>();
  /** This node's own record. */
  readonly #self: SelfRecord;
  #observations = 0;
  /** Nodes that left the live set since the last `takeDepartures`, by how they left. */
  #departed = { done: new Set<string>(), lost: new Set<string>() };
  /** Every node seen to leave the live set in this run, however it left (departedIds). */
  readonly #departedEver = new Set<string>();
  /** Ids whose latest record seen says `done` (kept after the record is removed). */
  readonly #done = new Set<string>();
  /** Peers whose record named another process than the one before, in this observation. */
  readonly #replaced = new Set<string>();

  /** `deps.onSilence`: SelfRecordDeps.onSilence. */
  constructor(layout: Layout, options: MembershipOptions, deps: SelfRecordDeps) {
    this.#layout = layout;
    this.#options = options;
    this.#clock = deps.clock;
    this.#self = new SelfRecord(layout, options, deps);
  }

  get nodeId(): string {
    return this.#options.nodeId;
  }

  /** This node's process (NodeRecord.incarnation): the leases it takes name it. */
  get incarnation(): string {
    return this.#self.incarnation;
  }

  /** NodeProcesses.replaced; the process the last observe saw runs (no read). Throws what the read throws; absent or torn: false. */
  async replaced(nodeId: string, incarnation: string): Promise<boolean> {
    if (this.#peers.get(nodeId)?.record.incarnation === incarnation) return false;
    const read = await readRecord(this.#layout.mount, this.#layout.node(nodeId), asNodeRecord);
    return read.kind === 'value' && read.value.incarnation !== undefined && read.value.incarnation !== incarnation;
  }

  /** NodeProcesses.cameBack. Throws as `replaced`; a record absent or torn: false. */
  async cameBack(nodeId: string): Promise<boolean> {
    const read = await readRecord(this.#layout.mount, this.#layout.node(nodeId), asNodeRecord);
    if (read.kind !== 'value' || read.value.state === 'done' || read.value.state === 'stopping') return false;
    const seen = this.#peers.get(nodeId)?.record;
    return seen === undefined || read.value.counter !== seen.counter || read.value.incarnation !== seen.incarnation;
  }

  /** Monotonic time of the last heartbeat that reached the mount. */
  get lastBeatOk(): number {
    return this.#self.lastBeatOk;
  }

  /** The mount's clock as last seen (SelfRecord.serverTime). */
  get serverTime(): { mtimeMs: number; at: number } | undefined {
    return this.#self.serverTime;
  }

  /** The counter of the latest record this node wrote. */
  get counter(): number {
    return this.#self.counter;
  }

  /** The live nodes and their idle epochs as this node sees them (peer-liveness.ts), and whether every live peer settled in that view. */
  view(): { key: string; peersSettled: boolean } {
    const key = viewKey(this.#options.nodeId, this.#self.idleEpoch, this.#peers);
    return { key, peersSettled: peersSettledIn(key, this.#peers) };
  }

  /** Notes this node's state at once (SelfRecord.setState); `settled`: an empty reseed of it was taken in that view (SelfRecord.settle). */
  setState(state: NodeState, settled?: string): void {
    this.#self.setState(state);
    if (settled !== undefined) this.#self.settle(settled);
  }

  /** Writes this node's record. Throws what the file system throws. */
  beat(status: SelfStatus): Promise<void> {
    return this.#self.beat(status);
  }

  /** Removes this node's record (graceful exit): others stop counting it at their next read. */
  leave(): Promise<void> {
    return this.#self.leave();
  }

  /** How many times the nodes directory has been read. */
  get observations(): number {
    return this.#observations;
  }

  /** Reads every node record and updates who is alive. Returns true when the live set changed. */
  async observe(): Promise<boolean> {
    const beforeIds = this.liveIds();
    const before = beforeIds.join('\n');
    const began = this.#clock.monotonic();
    const listing = await this.#layout.fs.readdir(this.#layout.dir('nodes'));
    const names = listing.filter((n) => n.endsWith('.json') && !n.startsWith('.'));
    const read = await Promise.all(
      names.map(async (name): Promise<[string, NodeRecord] | undefined> => {
        const id = name.slice(0, -5);
        if (id === this.#options.nodeId) return undefined;
        try {
          return [id, await readJsonValidated(this.#layout.mount, this.#layout.node(id), asNodeRecord)];
        } catch {
          return undefined; // vanished or unreadable: it will be read at the next beat
        }
      }),
    );
    // Timed when the reads are in, not when the listing was asked for: over a mount that stalled
    // in between, a change seen now would count as seen long ago, and every live peer as dead.
    const now = this.#clock.monotonic();
    // Applied together, once every record is in: the node's control loop runs between these
    // reads, and a live set it saw half changed (a peer gone by this view, still the owner of
    // its hosts by the ownership the heartbeat sets from the whole change) would send links
    // into the inbox of a node it treats as gone.
    const present = new Set<string>();
    for (const r of read) {
      if (r === undefined) continue;
      present.add(r[0]);
      this.#see(r[0], r[1], now, began);
    }
    for (const [id, peer] of this.#peers) {
      if (!present.has(id)) {
        this.#peers.delete(id); // left (record removed)
        continue;
      }
      // A dead process of this machine goes at once; others only after twice the dead-after
      // time, so that a node that was merely slow does not lose its record under it. A done
      // record stays that long too, dead process or not, so that the other nodes see it.
      const done = peer.record.state === 'done';
      if (!peer.alive && ((!done && isDeadLocalProcess(peer.record)) || began - peer.lastChange > 2 * this.#options.deadAfterMs)) {
        await this.#layout.fs.unlink(this.#layout.node(id)).catch(() => undefined);
        // and the temporary heartbeat files it was writing when it died (invariant 4), listed
        // again now: one it made after this observation's listing (killed while writing it)
        // would be missed, and no one would look for it again.
        for (const name of await this.#layout.fs.readdir(this.#layout.dir('nodes')).catch(() => listing)) {
          if (tempOwner(name) === id) await this.#layout.fs.unlink(join(this.#layout.dir('nodes'), name)).catch(() => undefined);
        }
        this.#peers.delete(id);
        this.#unknownSince.set(id, now - this.#options.deadAfterMs); // stays dead, not "never seen"
      }
    }
    this.#observations++;
    const after = this.liveIds();
    // A live peer started again with its id (docs/protocol.md, "Nodes and liveness"): its earlier process is lost, as if it left.
    const back = [...this.#replaced].filter((id) => after.includes(id));
    this.#replaced.clear();
    for (const id of beforeIds) {
      if (after.includes(id) && !back.includes(id)) continue;
      this.#departedEver.add(id);
      if (this.#peers.get(id)?.record.state === 'done') this.#departed.done.add(id);
      else this.#departed.lost.add(id);
    }
    return after.join('\n') !== before || back.length > 0;
  }

  /**
   * The nodes that left the live set since the last call: `done` ones were last seen in state
   * `done` (they hold nothing but their inbox); `lost` ones died, or their record vanished
   * before this node saw it say done (docs/protocol.md, "Leaving done").
   */
  takeDepartures(): { done: string[]; lost: string[] } {
    const d = { done: [...this.#departed.done], lost: [...this.#departed.lost] };
    this.#departed.done.clear();
    this.#departed.lost.clear();
    return d;
  }

  /**
   * Ids of every node this node saw leave the live set since it started (done, lost, or
   * stopped), whether or not takeDepartures handed them on since. A node that came back stays.
   */
  departedIds(): string[] {
    return [...this.#departedEver];
  }

  /** Ids of the nodes this node has seen say `done` (and not come back since). */
  doneIds(): string[] {
    return [...this.#done];
  }

  #see(id: string, record: NodeRecord, now: number, began: number): void {
    if (record.state === 'done') this.#done.add(id);
    else this.#done.delete(id);
    if (seePeer(this.#peers, id, record, now, began, this.#options.deadAfterMs)) this.#replaced.add(id);
  }

  /** Ids of the live nodes, this one included, sorted. */
  liveIds(): string[] {
    const ids = [this.#options.nodeId];
    for (const [id, peer] of this.#peers) if (peer.alive) ids.push(id);
    return ids.sort();
  }

  /** The latest record of live peer `nodeId` (which process runs that id), undefined when none. */
  recordOf(nodeId: string): NodeRecord | undefined {
    const peer = this.#peers.get(nodeId);
    return peer?.alive === true ? peer.record : undefined;
  }

  /** Live peers' latest records (for the status line). */
  livePeers(): NodeRecord[] {
    return [...this.#peers.values()].filter((p) => p.alive).map((p) => p.record);
  }

  /**
   * True when `nodeId` is neither this node nor a live peer. A node never seen in nodes/
   * (named by a lease or a temp file) may simply have started a moment ago, before its
   * first record reached us: it counts as alive for dead-after from the first time it was
   * asked about, like a peer whose counter stopped.
   */
  isGone(nodeId: string): boolean {
    if (nodeId === this.#options.nodeId) return false;
    const peer = this.#peers.get(nodeId);
    if (peer !== undefined) return !peer.alive;
    const now = this.#clock.monotonic();
    let since = this.#unknownSince.get(nodeId);
    if (since === undefined) {
      since = now;
      this.#unknownSince.set(nodeId, since);
    }
    return now - since >= this.#options.deadAfterMs;
  }

  /** When each node id that has no record was first asked about (monotonic). */
  readonly #unknownSince = new Map<string, number>();

  /** True when `nodeId` is this node or a live peer. */
  isAlive(nodeId: string): boolean {
    return !this.isGone(nodeId);
  }

  /** Since when every live node, this one too, has been seen idle without a break (peer-liveness.ts). */
  allIdleSince(): number | undefined {
    return allIdleSince(this.#self.idleSince, this.#peers);
  }

  /** After when every live peer is known to have written a record (peer-liveness.ts). */
  peersWroteAfter(): number {
    return peersWroteAfter(this.#peers);
  }

  /** The 1 to `most` live peers not seen idle while this node is idle (peer-liveness.ts). */
  lastBusyPeers(most: number): string[] | undefined {
    return lastBusyPeers(this.#self.idleSince, this.#peers, most);
  }

  /**
   * True when the record of peer `nodeId` says something else than it did at the last
   * observe about whether it works (idle, in which idle epoch, done, stopping, or removed).
   * Reads that one record and changes nothing: the next observe() does the bookkeeping.
   * Throws what the read throws, but for a record that is not there.
   */
  async peerStateMoved(nodeId: string): Promise<boolean> {
    const seen = this.#peers.get(nodeId)?.record;
    if (seen === undefined) return true;
    const read = await readRecord(this.#layout.mount, this.#layout.node(nodeId), asNodeRecord);
    if (read.kind === 'absent') return true;
    if (read.kind === 'torn') throw read.error;
    const now = read.value;
    return now.state !== seen.state || now.idleEpoch !== seen.idleEpoch;
  }

  /** Removes the records of peers seen `done` (the last node to end: nobody needs them; one that did not see them counts them lost). */
  async removeDoneRecords(): Promise<void> {
    for (const [id, peer] of this.#peers) {
      if (peer.record.state === 'done') await this.#layout.fs.unlink(this.#layout.node(id)).catch(() => undefined);
    }
  }
}

export type { NodeState };
