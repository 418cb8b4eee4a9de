import type { Clock } from '../config/clock.js';
import type { HostState } from '../frontier/host-state.js';
import type { HostKeeper } from './host-keeper.js';

/** Heartbeats a full reseed waits, at most, for the hosts that other live nodes still hold. */
export const HELD_WAIT_HEARTBEATS = 4;
/** How often a host still held is looked at again (its take is retried by the heartbeat). */
const POLL_MS = 50;

/**
 * Settles once a host's take is over, as HostKeeper.loaded; but while another live node holds
 * its lease (`blocked`: a node that joined wants hosts its peers crawl, and they release them
 * after their requests in flight and their summaries), until `until` (monotonic) it waits for a
 * retried take (docs/protocol.md, "Host summaries", At a hand-over): a scan that reads the host
 * before the release finds no summary, or one without the holder's last pages, and reads those
 * records one by one; after it, the summary its holder wrote at the release covers them.
 */
export async function loadedOrHeld(
  keeper: Pick<HostKeeper, 'loaded'>,
  host: HostState | undefined,
  clock: Clock,
  until: number,
): Promise<void> {
  if (host === undefined) return;
  await keeper.loaded(host);
  while (host.phase === 'blocked' && clock.monotonic() < until) {
    await new Promise<void>((resolve) => clock.setTimeout(resolve, POLL_MS));
    await keeper.loaded(host);
  }
}
