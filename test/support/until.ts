/**
 * Waits for a condition, not a time (the machine may be loaded): polls `check` every 20 ms
 * and throws after `timeoutMs`.
 */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
