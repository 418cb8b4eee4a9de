import type { HostRule } from './rule.js';

/** Nothing is taken for a host being let go (it moved, or its lease was lost) or left alone (robots.txt). */
export const hostOpenRule: HostRule = (_c, host) => host.phase !== 'releasing' && !host.gaveUp;
