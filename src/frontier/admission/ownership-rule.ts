import type { Ownership } from '../../cluster/ownership.js';
import type { UrlRule } from './rule.js';

/** Only the URL's owner crawls it (host or URL partitioning, docs/protocol.md). */
export function ownershipRule(ownership: Ownership): UrlRule {
  return (c) => ownership.ownsUrl(c.hostDir, c.key);
}
