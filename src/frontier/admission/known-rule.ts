import type { UrlRule } from './rule.js';

/**
 * A URL done or claimed (queued, retrying, in flight) is not taken again. Most links a page
 * has were seen before: this rule comes early, before the costlier ones.
 */
export const knownRule: UrlRule = (c, host) => host === undefined || !host.isKnown(c.key);
