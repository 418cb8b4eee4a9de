/**
 * Runs `fn` over `items` with at most `limit` calls in flight and yields the results in the
 * order of `items`, as the consumer asks for them: a call starts only when the results before
 * it that are not yet taken number fewer than `limit`, so a slow consumer (a stream waiting for
 * 'drain') holds at most `limit` results in memory. `items` may be an async iterable (a listing
 * made as it is read). The first error thrown by `fn` is thrown by the iteration, after the
 * calls in flight have settled.
 */
export async function* orderedMap<T, R>(
  items: Iterable<T> | AsyncIterable<T>,
  limit: number,
  fn: (item: T) => Promise<R>,
): AsyncGenerator<R, void, undefined> {
  const window: Promise<{ ok: true; value: R } | { ok: false; error: unknown }>[] = [];
  const settle = (p: Promise<R>): Promise<{ ok: true; value: R } | { ok: false; error: unknown }> =>
    p.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  try {
    for await (const item of items) {
      window.push(settle(fn(item)));
      if (window.length < Math.max(1, limit)) continue;
      const head = await window.shift()!;
      if (!head.ok) throw head.error;
      yield head.value;
    }
    while (window.length > 0) {
      const head = await window.shift()!;
      if (!head.ok) throw head.error;
      yield head.value;
    }
  } finally {
    // Stopped early (an error, or the consumer left): let the calls in flight end first.
    await Promise.all(window);
  }
}
