import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A program the benchmark needs from the system, and the Debian package it comes in. */
export interface Tool {
  readonly name: 'wget' | 'scrapy' | 'time';
  readonly debianPackage: string;
  /** What it is for, in the message that says it is missing. */
  readonly neededFor: string;
}

export const TOOLS: Record<Tool['name'], Tool> = {
  wget: { name: 'wget', debianPackage: 'wget', neededFor: 'the wget peer' },
  scrapy: { name: 'scrapy', debianPackage: 'python3-scrapy', neededFor: 'the Scrapy peer' },
  time: { name: 'time', debianPackage: 'time', neededFor: 'exact CPU seconds of process trees (/usr/bin/time)' },
};

/** What was found: a version string (and for Scrapy the Python that has it), or why not. */
export type Found =
  | { readonly ok: true; readonly version: string; readonly python?: string }
  | { readonly ok: false; readonly why: string };

/** Pythons tried for Scrapy, Debian's first (python3-scrapy installs there, not into a pyenv). */
export const PYTHONS = ['/usr/bin/python3', 'python3'];

/** Looks for a tool without installing anything. */
export async function findTool(tool: Tool, python?: string): Promise<Found> {
  try {
    switch (tool.name) {
      case 'wget': {
        const { stdout } = await run('wget', ['--version']);
        return { ok: true, version: stdout.split('\n')[0]!.trim() };
      }
      case 'time':
        return existsSync('/usr/bin/time') ? { ok: true, version: '/usr/bin/time' } : { ok: false, why: 'no /usr/bin/time' };
      case 'scrapy': {
        for (const py of python === undefined ? PYTHONS : [python]) {
          try {
            const { stdout } = await run(py, ['-c', 'import scrapy, sys; print(scrapy.__version__, sys.version.split()[0])']);
            const [v, pv] = stdout.trim().split(' ');
            return { ok: true, version: `Scrapy ${v} (Python ${pv}, ${py})`, python: py };
          } catch {
            // try the next one
          }
        }
        return { ok: false, why: `no Python among ${(python === undefined ? PYTHONS : [python]).join(', ')} can import scrapy` };
      }
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { ok: false, why: e.code === 'ENOENT' ? `${tool.name} is not on PATH` : e.message.split('\n')[0]! };
  }
}

let updated = false;

/**
 * Finds each tool, and installs the missing ones with apt-get when `install` is set and this
 * process may (root, or sudo without a password). Says on stderr exactly what is missing and
 * how to get it; the caller skips what stays missing.
 */
export async function ensureTools(
  tools: readonly Tool[],
  options: { install: boolean; python?: string; log: (line: string) => void },
): Promise<Map<Tool['name'], Found>> {
  const found = new Map<Tool['name'], Found>();
  for (const t of tools) found.set(t.name, await findTool(t, options.python));
  const missing = tools.filter((t) => !found.get(t.name)!.ok);
  if (missing.length === 0) return found;
  const packages = missing.map((t) => t.debianPackage);
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  if (options.install) {
    options.log(`installing ${packages.join(' ')} (apt-get)`);
    try {
      const apt = async (args: string[]): Promise<void> => {
        const [cmd, ...rest] = [...sudo, 'apt-get', ...args];
        await run(cmd!, rest, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 64 * 1024 * 1024 });
      };
      if (!updated) await apt(['update', '-qq']);
      updated = true;
      await apt(['install', '-y', '-qq', '--no-install-recommends', ...packages]);
    } catch (err) {
      options.log(`apt-get failed: ${(err as Error).message.split('\n').slice(-2).join(' ')}`);
    }
    for (const t of missing) found.set(t.name, await findTool(t, options.python));
  }
  for (const t of missing) {
    const f = found.get(t.name)!;
    if (!f.ok) {
      options.log(
        `missing: ${t.name} (${f.why}), needed for ${t.neededFor}: install the Debian package ${t.debianPackage} ` +
          `(apt-get install ${t.debianPackage})${options.install ? '' : ', or run without --no-install'}`,
      );
    }
  }
  return found;
}
