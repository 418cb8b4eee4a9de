import { createHash, type Hash } from 'node:crypto';

/**
 * What happened in a run, in order (docs/simulator.md): every operation that reached the
 * mount's server, every request to the site, every fault and every node's start and end.
 * Its hash says whether two runs of one seed were the same; with `verbose` each line is also
 * kept for printing. Paths are made relative to the data directory; every name in them is
 * the run's own (temporary and hand-off names take their tag from the node's virtual clock,
 * lease tokens from the run's generator: src/store/mount.ts).
 */
export class Trace {
  readonly #hash: Hash = createHash('sha256');
  readonly #root: string;
  readonly lines: string[] = [];
  readonly #verbose: boolean;
  /** Lines recorded. */
  count = 0;

  constructor(root: string, verbose: boolean) {
    this.#root = root;
    this.#verbose = verbose;
  }

  /** An operation that reached the mount's server and its outcome. */
  op(t: number, node: string, call: string, what: string, error: unknown): void {
    const code = error === undefined ? 'ok' : ((error as NodeJS.ErrnoException).code ?? 'error');
    this.#add(t, node, `${call} ${this.#path(what)} ${code}`);
  }

  /** Anything else worth a line: a request, a fault, a node's start or end. */
  note(t: number, node: string, text: string): void {
    this.#add(t, node, this.#path(text));
  }

  /** A node's log line: printed with the trace when verbose, not hashed (log text is not part of the contract). */
  log(t: number, node: string, text: string): void {
    if (this.#verbose) this.lines.push(`${t.toFixed(3)} ${node} log: ${this.#path(text)}`);
  }

  /** The hash of every line so far, as 16 hex digits. */
  digest(): string {
    return this.#hash.copy().digest('hex').slice(0, 16);
  }

  #path(text: string): string {
    return text.replaceAll(this.#root, '');
  }

  #add(t: number, node: string, text: string): void {
    const line = `${t.toFixed(3)} ${node} ${text}`;
    this.#hash.update(line);
    this.#hash.update('\n');
    this.count++;
    if (this.#verbose) this.lines.push(line);
  }
}
