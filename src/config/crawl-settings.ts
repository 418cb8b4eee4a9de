import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { usageError } from '../errors.js';
import { parseKeepTypes } from '../fetch/keep-types.js';
import { parseHeaderOption } from '../fetch/request-headers.js';
import { parseDurationMs } from '../recrawl/duration.js';
import type { CrawlConfig } from './crawl-config.js';
import { parseChoice, parseRegex, parseSeconds, parseSize, parseWhole } from './parse-values.js';

/** One setting's value in the crawl's settings file, in the syntax of its option. */
export type SettingValue = string | number | boolean | null | readonly string[];

/** What a node's settings are made of besides its CrawlConfig: the --hook files, in order. */
export interface SettingsInputs {
  readonly hookFiles: readonly string[];
}

/**
 * One setting every node of a crawl must agree on (docs/operations.md, "One configuration"):
 * named by its option (without `--`), with its value in the option's own syntax.
 */
export interface SettingSpec {
  readonly name: string;
  /** The value a node's configuration gives. */
  readonly of: (c: CrawlConfig, inputs: SettingsInputs) => SettingValue;
  /** The configuration fields of a value; undefined: a node cannot adopt it (a file only it has), it must match. */
  readonly apply?: (v: SettingValue, c: CrawlConfig) => Partial<CrawlConfig>;
  /** `mountcrawl config set NAME VALUE...`: the value of the words given; undefined: not settable that way. */
  readonly parse?: (words: readonly string[]) => SettingValue;
  /** Running nodes apply a change of it (src/config/live-settings.ts). */
  readonly live?: boolean;
}

const one = (name: string, words: readonly string[]): string => {
  if (words.length !== 1) throw usageError(`config set ${name} takes one value, got ${words.length}`);
  return words[0]!;
};
const finite = (n: number): SettingValue => (Number.isFinite(n) ? n : 'unlimited');
const numberOf = (v: SettingValue): number => (v === 'unlimited' ? Infinity : Number(v));
const digest = (text: string | Buffer): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** A whole-number option stored in the config's field of the same unit. */
function whole(name: string, field: keyof CrawlConfig, min: number, unlimited = false, live = false): SettingSpec {
  return {
    name,
    of: (c) => finite(c[field] as number),
    apply: (v) => ({ [field]: numberOf(v) }),
    parse: (w) => finite(parseWhole(`--${name}`, one(name, w), min, unlimited)),
    ...(live ? { live } : {}),
  };
}

/** An option in seconds, kept in milliseconds by the config. */
function seconds(name: string, field: keyof CrawlConfig, allowZero: boolean): SettingSpec {
  return {
    name,
    of: (c) => (c[field] as number) / 1000,
    apply: (v) => ({ [field]: Math.round(Number(v) * 1000) }),
    parse: (w) => parseSeconds(`--${name}`, one(name, w), allowZero) / 1000,
  };
}

/** A flag: true when given. */
function flag(name: string, of: (c: CrawlConfig) => boolean, apply: (on: boolean) => Partial<CrawlConfig>): SettingSpec {
  return {
    name,
    of,
    apply: (v) => apply(v === true),
    parse: (w) => parseChoice(`--${name}`, one(name, w), ['true', 'false']) === 'true',
  };
}

/** A repeatable regular expression option. */
function patterns(name: 'include' | 'exclude'): SettingSpec {
  return {
    name,
    of: (c) => c[name].map((r) => r.source),
    apply: (v) => ({ [name]: (v as string[]).map((s) => new RegExp(s)) }),
    parse: (w) => w.map((s) => parseRegex(`--${name}`, s).source),
  };
}

/** A --recrawl-* duration, kept as the option's text in seconds (`86400s`). */
function recrawlBound(name: 'recrawl-min' | 'recrawl-max', field: 'minMs' | 'maxMs'): SettingSpec {
  return {
    name,
    of: (c) => (c.recrawl === undefined ? null : `${c.recrawl[field] / 1000}s`),
    apply: (v, c) => (c.recrawl === undefined || v === null ? {} : { recrawl: { ...c.recrawl, [field]: parseDurationMs(String(v))! } }),
  };
}

/**
 * The settings of one crawl, in the order of the settings file. Per-node options
 * (--concurrency, --processes, --node-id, timeouts, --heartbeat, --progress, ...) are not here.
 * Applied in this order: a --recrawl-after comes before the bounds it gives defaults to.
 */
export const SETTINGS: readonly SettingSpec[] = Object.freeze([
  {
    name: 'scope',
    of: (c) => c.scope,
    apply: (v) => ({ scope: v as CrawlConfig['scope'] }),
    parse: (w) => parseChoice('--scope', one('scope', w), ['host', 'domain', 'any']),
  },
  patterns('include'),
  patterns('exclude'),
  whole('max-depth', 'maxDepth', 0, true),
  whole('max-pages', 'maxPages', 1, true, true),
  whole('max-pages-per-host', 'maxPagesPerHost', 1, true),
  whole('max-pages-per-pattern', 'maxPagesPerPattern', 1, true),
  whole('max-repeated-segments', 'maxRepeatedSegments', 2, true),
  {
    name: 'max-url-length',
    of: (c) => c.normalize.maxUrlLength,
    apply: (v, c) => ({ normalize: Object.freeze({ ...c.normalize, maxUrlLength: Number(v) }) }),
    parse: (w) => parseWhole('--max-url-length', one('max-url-length', w), 16),
  },
  {
    name: 'max-bytes',
    of: (c) => c.maxBytes,
    apply: (v) => ({ maxBytes: Number(v) }),
    parse: (w) => parseSize('--max-bytes', one('max-bytes', w)),
  },
  whole('max-attempts', 'maxAttempts', 1),
  whole('delay', 'delayMs', 0, false, true),
  whole('per-host', 'perHost', 1, false, true),
  seconds('crawl-delay-cap', 'crawlDelayCapMs', true),
  { name: 'user-agent', of: (c) => c.userAgent, apply: (v) => ({ userAgent: String(v) }), parse: (w) => one('user-agent', w) },
  flag(
    'ignore-robots',
    (c) => !c.robots,
    (on) => ({ robots: !on }),
  ),
  flag(
    'obey-rel-nofollow',
    (c) => c.obeyRelNofollow === true,
    (on) => ({ obeyRelNofollow: on }),
  ),
  {
    name: 'keep',
    of: (c) => (c.keepTypes === undefined ? null : [...c.keepTypes]),
    apply: (v) => ({ keepTypes: v === null ? undefined : (v as string[]) }),
    parse: (w) => (w.length === 0 ? null : [...parseKeepTypes(w.join(','))]),
  },
  flag(
    'warc',
    (c) => c.warc,
    (on) => ({ warc: on }),
  ),
  {
    name: 'header',
    of: (c) => (c.headers ?? []).map(([n, v]) => `${n}: ${v}`),
    apply: (v) => ({ headers: (v as string[]).map(parseHeaderOption) }),
    parse: (w) => w.map((h) => parseHeaderOption(h)).map(([n, v]) => `${n}: ${v}`),
  },
  {
    name: 'partition',
    of: (c) => c.partition,
    apply: (v) => ({ partition: v as CrawlConfig['partition'] }),
  },
  {
    name: 'recrawl-after',
    of: (c) => (c.recrawl === undefined ? null : `${c.recrawl.afterMs / 1000}s`),
    apply: (v) => {
      const afterMs = v === null ? undefined : parseDurationMs(String(v));
      return {
        recrawl: afterMs === undefined ? undefined : { afterMs, adaptive: false, minMs: Math.floor(afterMs / 4), maxMs: afterMs * 8 },
      };
    },
  },
  {
    name: 'recrawl-adaptive',
    of: (c) => c.recrawl?.adaptive === true,
    apply: (v, c) => (c.recrawl ? { recrawl: { ...c.recrawl, adaptive: v === true } } : {}),
  },
  recrawlBound('recrawl-min', 'minMs'),
  recrawlBound('recrawl-max', 'maxMs'),
  // Files only the node that reads them has: compared by digest, never adopted.
  { name: 'cookie-file', of: (c) => (c.cookies === undefined ? null : digest(JSON.stringify(c.cookies))) },
  { name: 'hook', of: (_c, i) => i.hookFiles.map((f) => digest(readFileSync(f))) },
]);

/** The spec of a setting by its name (with or without `--`), or undefined. */
export function settingNamed(name: string): SettingSpec | undefined {
  const bare = name.replace(/^--/, '');
  return SETTINGS.find((s) => s.name === bare);
}

/** Names of the settings running nodes apply (docs/operations.md). */
export const LIVE_SETTINGS: readonly string[] = SETTINGS.filter((s) => s.live).map((s) => s.name);

/** The settings of a node's configuration, by name. */
export function settingsOf(config: CrawlConfig, inputs: SettingsInputs): Record<string, SettingValue> {
  return Object.fromEntries(SETTINGS.map((s) => [s.name, s.of(config, inputs)]));
}

/** The option's value as a person reads it: `--delay 1000`, `--include a b`, `--keep (none)`. */
export function settingText(v: SettingValue | undefined): string {
  if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) return '(none)';
  return Array.isArray(v)
    ? v.map((s) => JSON.stringify(s)).join(' ')
    : typeof v === 'string' && /\s|^$/.test(v)
      ? JSON.stringify(v)
      : String(v);
}

/** True when two values of a setting are the same. */
export function sameSetting(a: SettingValue | undefined, b: SettingValue | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The settings whose options were given on the command line (`isGiven` of commander's key for each). */
export function givenSettings(isGiven: (key: string) => boolean): Set<string> {
  return new Set(SETTINGS.filter((s) => isGiven(optionKey(s.name))).map((s) => s.name));
}

/**
 * The camel-case name commander gives a setting's option (`max-pages-per-host` ->
 * `maxPagesPerHost`), to ask whether it was given on the command line.
 */
export function optionKey(name: string): string {
  return name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}
