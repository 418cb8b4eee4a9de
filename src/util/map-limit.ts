/**
 * Runs `fn` over `items` with at most `limit` calls in flight, and resolves when all are
 * done (rejecting with the first error, after the calls in flight have settled). Keeps the
 * number of open files bounded where Promise.all over a directory listing would not.
 */
export async function mapLimit<T>(items: Iterable<T>, limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const it = items[Symbol.iterator]();
  let failed: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    for (let next = it.next(); !next.done && failed === undefined; next = it.next()) {
      try {
        await fn(next.value);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
  if (failed !== undefined) throw failed.error;
}
