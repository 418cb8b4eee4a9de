import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Runs `script` (an ES module) in a child Node process and returns its exit code and stdout;
 * kills it after `timeoutMs` (the code is then null). The script goes in a file in `dir`, not
 * `-e`: a worker thread inherits the process's flags, and `--input-type` makes it fail.
 */
export async function runNodeScript(dir: string, script: string, timeoutMs: number): Promise<{ code: number | null; stdout: string }> {
  const file = join(dir, 'child.mjs');
  await writeFile(file, script);
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  return { code, stdout: stdout.trim() };
}
