import { join } from 'node:path';
import { ExitCode, FatalError } from '../errors.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { createExclusive } from '../store/exclusive-create.js';
import { readRecord } from '../store/read-record.js';
import type { CrawlConfig } from './crawl-config.js';
import { SETTINGS, sameSetting, settingsOf, settingText, type SettingsInputs, type SettingValue } from './crawl-settings.js';

/** The crawl's settings on the mount (docs/protocol.md, "The crawl's settings"). */
export const SETTINGS_FILE = '.mountcrawl-settings.json';

/** What the settings file holds. */
export interface SettingsRecord {
  readonly format: 1;
  /** 1 when the first node wrote it; one more at each `mountcrawl config set`. */
  readonly revision: number;
  /** The node (or `config set`) that wrote this revision, and when (wall time, for people). */
  readonly writtenBy: string;
  readonly writtenAt: string;
  readonly settings: Readonly<Record<string, SettingValue>>;
}

export function settingsPath(dataDir: string): string {
  return join(dataDir, SETTINGS_FILE);
}

function asSettingsRecord(value: unknown): SettingsRecord {
  const r = value as Partial<SettingsRecord> | null;
  if (r === null || typeof r !== 'object' || r.format !== 1 || typeof r.revision !== 'number' || typeof r.settings !== 'object') {
    throw new TypeError('not a settings record');
  }
  return r as SettingsRecord;
}

/** The crawl's settings, or undefined when no node wrote them yet. A file that does not parse is thrown. */
export async function readSettings(dataDir: string): Promise<SettingsRecord | undefined> {
  const read = await readRecord(settingsPath(dataDir), asSettingsRecord);
  if (read.kind === 'torn') throw new FatalError('DATA_DIR_UNUSABLE', `${settingsPath(dataDir)} is not a settings file`, ExitCode.DATA_DIR);
  return read.kind === 'value' ? read.value : undefined;
}

/** Writes a new revision whole (docs/protocol.md, invariant 1). */
export function writeSettings(dataDir: string, record: SettingsRecord, nodeId: string): Promise<void> {
  return writeFileAtomic(settingsPath(dataDir), `${JSON.stringify(record, null, 1)}\n`, { nodeId, fsync: false });
}

/** What settling a node's settings gave: its configuration (the crawl's settings adopted) and the record. */
export interface Settled {
  readonly config: CrawlConfig;
  readonly record: SettingsRecord;
  /** True when this node wrote the settings (it was the crawl's first). */
  readonly wrote: boolean;
}

/**
 * Makes a starting node agree with its crawl (docs/operations.md, "One configuration"): the
 * first node creates the settings file from its options by exclusive create, so that of two
 * nodes starting at the same moment exactly one writes and the other reads what it wrote; a
 * later node adopts the file's settings, and refuses (SETTINGS_CONFLICT, exit 2) when an option
 * it was given (`given`, by setting name), or a file only it has (--hook, --cookie-file),
 * differs from the crawl's. Call it before anything else the node writes for the crawl.
 */
export async function settleSettings(config: CrawlConfig, inputs: SettingsInputs, given: ReadonlySet<string>): Promise<Settled> {
  const mine = settingsOf(config, inputs);
  // Two tries: a file that vanished between a lost create and the read (removed by hand) is created again.
  for (let attempt = 0; attempt < 2; attempt++) {
    const found = await readSettings(config.dataDir);
    if (found !== undefined) return { config: adopt(config, found, mine, given), record: found, wrote: false };
    const record: SettingsRecord = {
      format: 1,
      revision: 1,
      writtenBy: config.nodeId,
      writtenAt: new Date().toISOString(),
      settings: mine,
    };
    if (await createExclusive(settingsPath(config.dataDir), `${JSON.stringify(record, null, 1)}\n`, config.nodeId)) {
      return { config, record, wrote: true };
    }
  }
  throw new FatalError('DATA_DIR_UNUSABLE', `${settingsPath(config.dataDir)} can be neither created nor read`, ExitCode.DATA_DIR);
}

/** The settings a node was given that differ from the crawl's, as `--name its (the crawl's: theirs)`. */
export function conflicts(
  mine: Readonly<Record<string, SettingValue>>,
  theirs: Readonly<Record<string, SettingValue>>,
  given: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const spec of SETTINGS) {
    if (!(spec.name in theirs)) continue; // written by a version without it
    const compared = spec.apply === undefined || given.has(spec.name);
    if (compared && !sameSetting(mine[spec.name], theirs[spec.name])) {
      out.push(
        `--${spec.name} ${settingText(mine[spec.name])} conflicts with this crawl's --${spec.name} ${settingText(theirs[spec.name])}`,
      );
    }
  }
  return out;
}

function adopt(config: CrawlConfig, found: SettingsRecord, mine: Record<string, SettingValue>, given: ReadonlySet<string>): CrawlConfig {
  const differ = conflicts(mine, found.settings, given);
  if (differ.length > 0) {
    const more = differ.length > 1 ? ` (and ${differ.length - 1} more)` : '';
    throw new FatalError(
      'SETTINGS_CONFLICT',
      `${differ[0]}${more}: leave the option out to adopt the crawl's, or change it with mountcrawl config set (mountcrawl config shows them)`,
      ExitCode.USAGE,
    );
  }
  let out: CrawlConfig = config;
  for (const spec of SETTINGS) {
    if (spec.apply !== undefined && spec.name in found.settings) out = { ...out, ...spec.apply(found.settings[spec.name]!, out) };
  }
  return Object.freeze(out);
}
