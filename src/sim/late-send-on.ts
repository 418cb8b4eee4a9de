import { EndKill } from './end-kill.js';

/** What the scenario acts through: the run's kill and pause, and a look at an inbox on the mount. */
export interface LateSendOnDeps {
  /** Ends a process for good, as a drawn kill would. */
  kill(process: string): void;
  /** Stops a process for `ms`, as a drawn pause would. */
  pause(process: string, ms: number): void;
  /** True when the hand-off inbox of the node of `process` holds a link no node has asked the site for yet. */
  inboxHoldsNew(process: string): boolean;
  /** The hand-off files (not temporary) in the inbox of node `node` now. */
  inboxFiles(node: string): readonly string[];
  /** How long the sender of the first hand-off sent on to an idle peer is held (less than a third of --dead-after: not fenced). */
  readonly holdMs: number;
}

/**
 * The `late-send-on` scenario (docs/simulator.md, "Scenarios"): the case the last look before
 * the end guards (docs/protocol.md, "Leaving done", the paragraph on sending on). First the kill
 * of `end-kill` (src/sim/end-kill.ts), among three nodes or more: a node idle among idle peers,
 * with links no node asked for in its inbox, is killed for good, so that the peer that reads its
 * inbox first, once it is found dead, sends on the links of hosts it does not own, after it said
 * idle. Then the first node that writes a hand-off into the inbox of a peer whose last record
 * says `idle`, while its own says `idle` too (sending on), is paused as the file's temporary name
 * lands, for `holdMs`: the file is renamed into place after that peer may have ended done. The
 * scenario counts the hazard when it comes: a file sent on that is in a node's inbox when its
 * `done` record lands, or lands in the inbox of a node whose record says `done`.
 */
export class LateSendOn {
  readonly #d: LateSendOnDeps;
  readonly #kill: EndKill;
  /** The state of each node's last record on the mount, by node id. */
  readonly #states = new Map<string, string>();
  /** Hand-off files written while their writer's last record said `idle`, as `owner/name`. */
  readonly #sentOn = new Set<string>();
  /** Nodes this scenario killed: their last record still says what it said. */
  readonly #killed = new Set<string>();
  #held = false;
  /** Files sent on found in a done node's inbox. */
  hazards = 0;

  constructor(deps: LateSendOnDeps) {
    this.#d = deps;
    this.#kill = new EndKill((process) => {
      this.#killed.add(nodeOf(process));
      deps.kill(process);
    }, deps.inboxHoldsNew);
  }

  /** A record of `process` saying `state` landed; `running`: the processes running now. */
  record(process: string, state: string, running: readonly string[]): void {
    const node = nodeOf(process);
    this.#states.set(node, state);
    this.#kill.record(process, state, running);
    if (state === 'done') this.hazards += this.#d.inboxFiles(node).filter((name) => this.#sentOn.has(`${node}/${name}`)).length;
  }

  /** An operation of `process` the server made (`call`, `what` as the trace names them). */
  op(process: string, call: string, what: string): void {
    const to = /\/handoff\/([^/]+)\/([^/]+)$/.exec(call === 'rename' ? what.split(' -> ')[1]! : what);
    const writer = nodeOf(process);
    if (to === null || to[1] === writer || this.#states.get(writer) !== 'idle') return;
    const [, owner, name] = to as unknown as [string, string, string];
    if (call === 'create' && name.includes('~') && !this.#held && this.#states.get(owner) === 'idle' && !this.#killed.has(owner)) {
      this.#held = true;
      this.#d.pause(process, this.#d.holdMs);
    }
    if (call !== 'rename') return;
    this.#sentOn.add(`${owner}/${name}`);
    if (this.#states.get(owner) === 'done') this.hazards++;
  }
}

/** The node id of a process (`n1.3`: node `n1`, its third start in the run). */
function nodeOf(process: string): string {
  return process.slice(0, process.lastIndexOf('.'));
}
