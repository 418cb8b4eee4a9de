import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The parts of a V8 .cpuprofile (what `node --cpu-prof` writes) that are read here. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Self time of one function or one module, over every profile read. */
export interface SelfTime {
  readonly name: string;
  readonly ms: number;
  /** Share of the sampled time that was not idle. */
  readonly percent: number;
}

export interface ProfileSummary {
  readonly files: readonly string[];
  /** Sampled time that was not idle, ms. */
  readonly busyMs: number;
  readonly idleMs: number;
  readonly functions: readonly SelfTime[];
  readonly modules: readonly SelfTime[];
}

/**
 * The module a frame belongs to: `src/reseed/reseeder.ts` for the project's own code (the
 * compiled dist/ path mapped back), the package for node_modules (`undici`, `htmlparser2`),
 * `node:internal/<area>` for Node's own JavaScript, and V8's pseudo-frames as they are.
 */
export function moduleOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + '/dist/'.length).replace(/\.js$/, '.ts');
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  return url;
}

/** Reads every .cpuprofile in `dir` and adds up self time by function and by module. */
export async function summarizeProfiles(dir: string, top = 15): Promise<ProfileSummary> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')).sort();
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  for (const f of files) {
    const profile = JSON.parse(await readFile(join(dir, f), 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    profile.samples.forEach((id, i) => {
      const us = profile.timeDeltas[i] ?? 0;
      const frame = nodes.get(id)!;
      if (frame.functionName === '(idle)') {
        idleUs += us;
        return;
      }
      busyUs += us;
      const mod = moduleOf(frame.url, frame.functionName);
      const fn = `${frame.functionName || '(anonymous)'} ${frame.url === '' ? '' : `${mod}:${frame.lineNumber + 1}`}`.trim();
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
      byModule.set(mod, (byModule.get(mod) ?? 0) + us);
    });
  }
  const rank = (m: Map<string, number>): SelfTime[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: Math.round(us / 1000), percent: busyUs === 0 ? 0 : Math.round((us / busyUs) * 1000) / 10 }));
  return {
    files,
    busyMs: Math.round(busyUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    functions: rank(byFunction),
    modules: rank(byModule),
  };
}

/** The summary as two Markdown tables. */
export function formatProfile(s: ProfileSummary): string {
  const table = (title: string, rows: readonly SelfTime[]): string =>
    [`| ${title} | self ms | % of busy |`, '| --- | --- | --- |', ...rows.map((r) => `| \`${r.name}\` | ${r.ms} | ${r.percent} |`)].join(
      '\n',
    );
  return [
    `${s.files.length} profiles, ${(s.busyMs / 1000).toFixed(1)} s busy, ${(s.idleMs / 1000).toFixed(1)} s idle`,
    '',
    table('function (self time)', s.functions),
    '',
    table('module (self time)', s.modules),
  ].join('\n');
}
