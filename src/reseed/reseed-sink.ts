import type { OfferResult } from '../frontier/admission/admission.js';
import type { Referrer } from '../store/records.js';

/** What the reseeder hands links to. */
export interface ReseedSink {
  /** Cheap first filter: does this node crawl this host at all (scope and ownership)? */
  wantsHost(hostDir: string): boolean;
  /** Called with the wanted hosts that have files on the mount, before any offer. */
  prepareHosts(hostDirs: readonly string[]): Promise<void>;
  /**
   * Settles once a host's listing is taken (its done keys known), whatever its outcome: a
   * scan reads a host's summary and records after it, so that the host's own links meet its
   * done set, while the other hosts are still being taken.
   */
  hostLoaded?(hostDir: string): Promise<void>;
  /** A seed found in seeds/: widens the scope; returns its normalized form, if it is usable. */
  addSeed(raw: string): { url: string; hostDir: string } | undefined;
  /**
   * A candidate URL. `queued`: now in the frontier; `known`: done, queued or filtered, nothing
   * more to do; `full`: the frontier is full, so the record must be read again next time.
   * `referrer`: the page whose links record named it (none for a seed).
   */
  offer(url: string, hostDir: string, depth: number, referrer?: Referrer): OfferResult | Promise<OfferResult>;
  /** The node's request slots are all taken: a scan then keeps to its share of the main thread (scan-pacer.ts). */
  saturated?(): boolean;
  /** A wanted host that a node which left done had (docs/protocol.md, "Leaving done"): a reseed that is not full neither adopts it nor reads its records. */
  quiet?(hostDir: string): boolean;
}

/** What one reseed did. */
export interface ReseedStats {
  queued: number;
  recordsRead: number;
  /** Host summaries taken for the records they cover (docs/protocol.md, "Host summaries"). */
  summariesRead: number;
  dirsListed: number;
  dirsSkipped: number;
  seedsRead: number;
  durationMs: number;
}
