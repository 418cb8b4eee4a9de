import type { MountServer } from './mount-server.js';
import { SIM_DATA_DIR } from './sim-config.js';

/**
 * The `end-kill` scenario (docs/simulator.md, "Scenarios"): a kill placed where the end rule is
 * weakest instead of drawn in time. Once every running node's last record has said `idle`, the
 * first node whose record lands on the mount while its hand-off inbox holds a link no node has
 * asked for yet is killed at that moment, for good: it proved itself alive to its peers and may
 * never read what they sent it last. The others must find it dead and crawl its hosts before
 * they end (docs/protocol.md, "Rounds, reseeds and the end of the crawl").
 */
export class EndKill {
  readonly #kill: (process: string) => void;
  readonly #inboxHoldsNew: (process: string) => boolean;
  /** The state of each process's last record on the mount. */
  readonly #states = new Map<string, string>();
  #armed = false;
  #fired = false;

  /** `kill` ends a process as a drawn kill would; `inboxHoldsNew` looks at its node's inbox on the mount. */
  constructor(kill: (process: string) => void, inboxHoldsNew: (process: string) => boolean) {
    this.#kill = kill;
    this.#inboxHoldsNew = inboxHoldsNew;
  }

  /** A record of `process` saying `state` landed; `running`: the processes running now. */
  record(process: string, state: string, running: readonly string[]): void {
    this.#states.set(process, state);
    if (this.#fired) return;
    this.#armed ||= running.length > 1 && running.every((p) => this.#states.get(p) === 'idle');
    if (!this.#armed || !this.#inboxHoldsNew(process)) return;
    this.#fired = true;
    this.#kill(process);
  }
}

/**
 * True when the hand-off inbox of the node of `process` holds a link to a URL no node has asked
 * the site for yet (docs/protocol.md, "Hand-offs"): work that only that node knows of so far.
 */
export function inboxHoldsNew(server: MountServer, requests: readonly { readonly url: string }[], process: string): boolean {
  const dir = `${SIM_DATA_DIR}/handoff/${process.slice(0, process.lastIndexOf('.'))}`;
  const asked = new Set(requests.map((r) => r.url));
  try {
    for (const name of server.readdir(dir).filter((n) => !n.startsWith('.'))) {
      const file = JSON.parse(server.readFile(`${dir}/${name}`).data.toString('utf8')) as { links?: Record<string, [string][]> };
      if (Object.values(file.links ?? {}).some((links) => links.some(([url]) => !asked.has(url)))) return true;
    }
  } catch {
    // an inbox gone, or a file torn: nothing to judge by
  }
  return false;
}
