/** One thing to happen at a virtual time: a timer of a node, the end of an operation, a fault. */
interface SimEvent {
  readonly at: number;
  readonly seq: number;
  /** The node incarnation whose process it runs in, or undefined for the world (the server, the site, faults). */
  readonly owner: string | undefined;
  readonly fn: () => void;
  cancelled: boolean;
}

/** What a process is: running, stopped by a signal (its events held), or gone (its events dropped). */
export type OwnerState = 'running' | 'paused' | 'dead';

/** Cancels a scheduled event. */
export interface Scheduled {
  cancel(): void;
}

/**
 * Virtual time for a whole simulated cluster (docs/simulator.md): one queue of events ordered
 * by time, then by the order they were made in; between two events every promise continuation
 * of the code that ran settles, so async code runs as far as it can before time moves. Events
 * of a paused process are held and delivered when it resumes; those of a killed one never run.
 */
export class Scheduler {
  #now = 0;
  #seq = 0;
  #heap: SimEvent[] = [];
  readonly #owners = new Map<string, OwnerState>();
  readonly #held = new Map<string, SimEvent[]>();
  /** Events run so far. */
  steps = 0;

  /** Virtual milliseconds since the start of the run. */
  get now(): number {
    return this.#now;
  }

  /** Runs `fn` at `ms` virtual milliseconds from now, in the process `owner` (if any). */
  after(ms: number, fn: () => void, owner?: string): Scheduled {
    const ev: SimEvent = { at: this.#now + Math.max(0, ms), seq: this.#seq++, owner, fn, cancelled: false };
    this.#push(ev);
    return {
      cancel: () => {
        ev.cancelled = true;
      },
    };
  }

  stateOf(owner: string): OwnerState {
    return this.#owners.get(owner) ?? 'running';
  }

  /** Stops a process: its events wait until resume. */
  pause(owner: string): void {
    if (this.stateOf(owner) === 'running') this.#owners.set(owner, 'paused');
  }

  /** Lets a paused process go on: what came due while it was stopped runs now, in order. */
  resume(owner: string): void {
    if (this.stateOf(owner) !== 'paused') return;
    this.#owners.set(owner, 'running');
    const held = this.#held.get(owner) ?? [];
    this.#held.delete(owner);
    for (const ev of held) this.#push({ ...ev, at: this.#now, seq: this.#seq++ });
  }

  /** Ends a process: its events and its held events never run. */
  kill(owner: string): void {
    this.#owners.set(owner, 'dead');
    this.#held.delete(owner);
  }

  /**
   * Runs events in order until `done()` says so, the queue is empty, or time passes `until`;
   * returns why it stopped.
   */
  async run(until: number, done: () => boolean): Promise<'done' | 'empty' | 'time'> {
    await settle();
    for (;;) {
      if (done()) return 'done';
      const ev = this.#pop();
      if (ev === undefined) return 'empty';
      if (ev.cancelled) continue;
      if (ev.at > until) {
        this.#push(ev);
        return 'time';
      }
      this.#now = ev.at;
      if (ev.owner !== undefined) {
        const state = this.stateOf(ev.owner);
        if (state === 'dead') continue;
        if (state === 'paused') {
          const held = this.#held.get(ev.owner) ?? [];
          held.push(ev);
          this.#held.set(ev.owner, held);
          continue;
        }
      }
      this.steps++;
      ev.fn();
      await settle();
    }
  }

  #push(ev: SimEvent): void {
    const h = this.#heap;
    h.push(ev);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  #pop(): SimEvent | undefined {
    const h = this.#heap;
    if (h.length === 0) return undefined;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Lets every promise continuation that is ready run (the microtask queue drains before an immediate). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
