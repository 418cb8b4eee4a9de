/**
 * What host partitioning allows a latency-bound cluster (docs/benchmarks-log.md, "The partition
 * bound"): with `--per-host 1` and hosts of equal size, N nodes finish when the node with the
 * most hosts does, so N nodes can run at most (hosts / most hosts on one node) times one node.
 * This draws the host directories of the bench's site (127.0.x.y_<random port>) `--trials`
 * times, gives them to nodes n1..nN by the crawler's own rendezvous hash, and prints the mean
 * of that bound, next to what uniformly random placement gives (the hash is as good as
 * random, and no hash does better on average).
 *
 *   node dist/bench/partition-bound.js --hosts 40,200 --nodes 2,4,8 --trials 3000
 */
import { candidate, ownerOf } from '../src/cluster/rendezvous.js';
import { round, wholeArg } from './measure.js';
import { benchArgs } from './args.js';

const { values: o } = benchArgs({
  options: {
    hosts: { type: 'string', default: '40,200' },
    nodes: { type: 'string', default: '2,4,8' },
    trials: { type: 'string', default: '3000' },
  },
});
const list = (name: 'hosts' | 'nodes'): number[] => o[name]!.split(',').map((s) => wholeArg('partition bound', name, s, 1));
const trials = wholeArg('partition bound', 'trials', o.trials, 1);

/** The most items any of `n` bins got, for `h` items placed by `place`. */
function mostInOneBin(h: number, n: number, place: (i: number) => number): number {
  const bins = new Array<number>(n).fill(0);
  for (let i = 0; i < h; i++) bins[place(i)]!++;
  return Math.max(...bins);
}

const lines = ['| hosts | nodes | mean bound, rendezvous | efficiency | mean bound, random placement |', '| --- | --- | --- | --- | --- |'];
for (const h of list('hosts')) {
  for (const n of list('nodes')) {
    const nodes = Array.from({ length: n }, (_, i) => candidate(`n${i + 1}`));
    const index = new Map(nodes.map((c, i) => [c.id, i]));
    let hashed = 0;
    let random = 0;
    for (let t = 0; t < trials; t++) {
      const port = (): number => 30_000 + Math.floor(Math.random() * 30_000);
      hashed += h / mostInOneBin(h, n, (i) => index.get(ownerOf(`127.0.${Math.floor(i / 250)}.${2 + (i % 250)}_${port()}`, nodes)!)!);
      random += h / mostInOneBin(h, n, () => Math.floor(Math.random() * n));
    }
    const bound = hashed / trials;
    lines.push(`| ${h} | ${n} | ${round(bound, 2)}x | ${round((100 * bound) / n, 0)}% | ${round(random / trials, 2)}x |`);
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
