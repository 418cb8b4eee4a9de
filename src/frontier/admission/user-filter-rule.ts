import type { UrlRule } from './rule.js';

/**
 * The `filter(url)` of a --hook module (docs/hooks.md): false keeps the URL out. A filter
 * that throws keeps the URL (the error is reported through `failed`).
 */
export function userFilterRule(filter: (url: string) => boolean, failed: (err: unknown) => void): UrlRule {
  return (c) => {
    try {
      return filter(c.url) !== false;
    } catch (err) {
      failed(err);
      return true;
    }
  };
}
