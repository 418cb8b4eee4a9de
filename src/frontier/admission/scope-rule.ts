import type { ScopeFilter } from '../scope.js';
import type { UrlRule } from './rule.js';

/** --scope, --include and --exclude (src/frontier/scope.ts). */
export function scopeRule(scope: ScopeFilter): UrlRule {
  return (c) => scope.accepts(c.url);
}
