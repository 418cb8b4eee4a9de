import type { MountWeather } from './mount-view.js';
import type { Random } from './random.js';

/** The kinds of fault a run may inject, as the summary counts them. */
export const FAULT_KINDS = ['kill', 'restart', 'pause', 'long-pause', 'join', 'clock-rate', 'eio', 'enospc', 'stall'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** A fault that happens to one node at one virtual time. */
export type NodeFault =
  | {
      readonly kind: 'kill';
      readonly at: number;
      readonly node: string;
      readonly restartAfter: number | undefined;
      readonly newId: boolean;
    }
  | { readonly kind: 'pause'; readonly at: number; readonly node: string; readonly forMs: number }
  | { readonly kind: 'join'; readonly at: number; readonly node: string };

interface Window {
  readonly from: number;
  readonly to: number;
  /** The node whose mount fails; undefined: the server, for every node. */
  readonly node: string | undefined;
}

/** What a run's faults depend on. */
export interface FaultSettings {
  readonly nodes: number;
  readonly deadAfterMs: number;
  /** Faults start within this many virtual milliseconds of the start. */
  readonly horizonMs: number;
  /** False: no fault is drawn, the run's scenario places its own (src/sim/end-kill.ts). */
  readonly drawn?: boolean;
}

/**
 * The faults of one run, all drawn from its generator before it starts (docs/simulator.md):
 * nodes killed (restarted later, with their id or a new one, or never), paused for less or
 * more than the dead-after time, joining mid-crawl; clocks running at different rates; the
 * mount failing with EIO or ENOSPC for a while, or stalling for one node.
 */
export class FaultPlan implements MountWeather {
  readonly initial: readonly string[];
  readonly nodeFaults: NodeFault[] = [];
  readonly rates = new Map<string, number>();
  readonly #eio: Window[] = [];
  readonly #enospc: Window[] = [];
  readonly #stalls: Window[] = [];
  readonly counts = new Map<FaultKind, number>();

  constructor(rng: Random, s: FaultSettings) {
    this.initial = Array.from({ length: s.nodes }, (_, i) => `n${i}`);
    for (const node of this.initial) this.rates.set(node, 1);
    if (s.drawn === false) return;
    const names = [...this.initial];
    const at = (): number => rng.between(0, s.horizonMs);
    const some = (p: number, max: number): number => {
      let n = 0;
      while (n < max && rng.chance(p)) n++;
      return n;
    };
    for (let i = some(0.5, 2); i > 0; i--) {
      const node = `n${names.length}`;
      names.push(node);
      this.#add({ kind: 'join', at: at(), node });
    }
    for (const node of names) {
      const rate = rng.chance(0.3) ? 0.9 + rng.next() * 0.2 : 1;
      this.rates.set(node, rate);
      if (rate !== 1) this.#count('clock-rate');
    }
    for (let i = some(0.45, 2); i > 0; i--) {
      const restart = rng.chance(0.6);
      this.#add({
        kind: 'kill',
        at: at(),
        node: rng.pick(names),
        restartAfter: restart ? rng.between(10, 4 * s.deadAfterMs) : undefined,
        newId: restart && rng.chance(0.3),
      });
    }
    for (let i = some(0.35, 2); i > 0; i--) {
      const long = rng.chance(0.6);
      const forMs = long ? rng.between(s.deadAfterMs + 1, 3 * s.deadAfterMs) : rng.between(10, s.deadAfterMs / 3);
      this.#add({ kind: 'pause', at: at(), node: rng.pick(names), forMs });
    }
    const window = (maxMs: number, node: string | undefined): Window => {
      const from = at();
      return { from, to: from + rng.between(1, maxMs), node };
    };
    for (let i = some(0.3, 2); i > 0; i--) {
      this.#eio.push(window(s.deadAfterMs, rng.chance(0.5) ? rng.pick(names) : undefined));
      this.#count('eio');
    }
    if (rng.chance(0.15)) {
      this.#enospc.push(window(s.deadAfterMs, undefined));
      this.#count('enospc');
    }
    for (let i = some(0.3, 2); i > 0; i--) {
      this.#stalls.push(window(2 * s.deadAfterMs, rng.pick(names)));
      this.#count('stall');
    }
    this.nodeFaults.sort((a, b) => a.at - b.at);
  }

  /** The virtual time the last fault is over: a run must end within a stated time after it. */
  get lastFaultEnd(): number {
    let end = 0;
    for (const f of this.nodeFaults) {
      const over = f.kind === 'pause' ? f.at + f.forMs : f.kind === 'kill' ? f.at + (f.restartAfter ?? 0) : f.at;
      end = Math.max(end, over);
    }
    for (const w of [...this.#eio, ...this.#enospc, ...this.#stalls]) end = Math.max(end, w.to);
    return end;
  }

  eio(node: string, t: number): boolean {
    return this.#eio.some((w) => covers(w, node, t));
  }

  enospc(t: number): boolean {
    return this.#enospc.some((w) => w.from <= t && t < w.to);
  }

  stallEnd(node: string, t: number): number | undefined {
    return this.#stalls.find((w) => covers(w, node, t))?.to;
  }

  /** One line: the faults of this run, for the trace. */
  describe(): string {
    const parts: string[] = this.nodeFaults.map((f) =>
      f.kind === 'kill'
        ? `kill ${f.node}@${f.at}${f.restartAfter === undefined ? '' : ` restart+${f.restartAfter}${f.newId ? ' new id' : ''}`}`
        : f.kind === 'pause'
          ? `pause ${f.node}@${f.at} for ${f.forMs}`
          : `join ${f.node}@${f.at}`,
    );
    for (const [kind, list] of [
      ['eio', this.#eio],
      ['enospc', this.#enospc],
      ['stall', this.#stalls],
    ] as const)
      for (const w of list) parts.push(`${kind} ${w.node ?? 'all'} ${w.from}..${w.to}`);
    for (const [node, rate] of this.rates) if (rate !== 1) parts.push(`rate ${node} ${rate.toFixed(3)}`);
    return parts.join(', ');
  }

  #add(f: NodeFault): void {
    this.nodeFaults.push(f);
  }

  /** Counts a fault as injected (node faults are counted by the run when they happen to a running node). */
  count(kind: FaultKind): void {
    this.#count(kind);
  }

  #count(kind: FaultKind): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }
}

function covers(w: Window, node: string, t: number): boolean {
  return (w.node === undefined || w.node === node) && w.from <= t && t < w.to;
}
