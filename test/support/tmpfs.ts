import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';

/**
 * A small tmpfs mounted for a test (the tests run as root in CI): a real file system that can
 * fill up or turn read-only. `mount()` answers a reason to skip when mounting is not allowed.
 */
export class Tmpfs {
  constructor(readonly path: string) {}

  async mount(sizeKiB: number): Promise<string | undefined> {
    await mkdir(this.path, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k`, 'tmpfs', this.path], { stdio: 'pipe' });
      return undefined;
    } catch (err) {
      return `cannot mount a tmpfs here (needs root): ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`;
    }
  }

  /**
   * Remounts with new options: `ro`, `rw`, `size=64m`. Turning read-only fails with "busy"
   * while a file is open for writing (the crawler writes all the time): tried again for a while.
   */
  remount(options: string): void {
    for (let attempt = 0; ; attempt++) {
      try {
        execFileSync('mount', ['-o', `remount,${options}`, this.path], { stdio: 'pipe' });
        return;
      } catch (err) {
        if (attempt >= 300 || !/busy/i.test(String((err as { stderr?: Buffer }).stderr))) throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      }
    }
  }

  unmount(): void {
    try {
      execFileSync('umount', [this.path], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', this.path], { stdio: 'pipe' });
    }
  }
}
