import { createRequire, syncBuiltinESMExports } from 'node:module';

// The CommonJS object behind `node:fs/promises`: replacing a function on it and calling
// syncBuiltinESMExports() makes every ESM `import { name } from 'node:fs/promises'` see the
// replacement, so a test can pause or watch one file system call of the module under test.
const fsp = createRequire(import.meta.url)('node:fs/promises') as Record<string, unknown>;

/**
 * Replaces `fs/promises[name]` with `wrap(original)` until the returned function is called.
 * Always restore in a finally block or t.after().
 */
export function hookFsPromises<F extends (...args: never[]) => unknown>(name: string, wrap: (original: F) => F): () => void {
  const original = fsp[name] as F;
  fsp[name] = wrap(original);
  syncBuiltinESMExports();
  return () => {
    fsp[name] = original;
    syncBuiltinESMExports();
  };
}

const fsc = createRequire(import.meta.url)('node:fs') as Record<string, unknown>;

/**
 * Replaces the callback-style `fs[name]` with `wrap(original)` until the returned function is
 * called (for modules that use `import { write } from 'node:fs'`). Always restore.
 */
export function hookFs<F extends (...args: never[]) => unknown>(name: string, wrap: (original: F) => F): () => void {
  const original = fsc[name] as F;
  fsc[name] = wrap(original);
  syncBuiltinESMExports();
  return () => {
    fsc[name] = original;
    syncBuiltinESMExports();
  };
}
