import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** The pid of a process of this machine that has exited (and been reaped). */
export async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start a child process');
  await once(child, 'exit');
  return pid;
}
