import { join } from 'node:path';
import { ExitCode, FatalError } from '../errors.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { createExclusive } from '../store/exclusive-create.js';
import { type Mount, nodeMount } from '../store/mount.js';
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
export async function readSettings(dataDir: string, mount: Mount = nodeMount): Promise<SettingsRecord | undefined> {
  const read = await readRecord(mount, settingsPath(dataDir), asSettingsRecord);
  if (read.kind === 'torn') throw new FatalError('DATA_DIR_UNUSABLE', `${settingsPath(dataDir)} is not a settings file`, ExitCode.DATA_DIR);
  return read.kind === 'value' ? read.value : undefined;
}

/** Writes a new revision whole (docs/protocol.md, invariant 1). */
export function writeSettings(dataDir: string, record: SettingsRecord, nodeId: string): Promise<void> {
  return writeFileAtomic(nodeMount, settingsPath(dataDir), `${JSON.stringify(record, null, 1)}\n`, { nodeId, fsync: false });
}

/** What settling a node's settings gave: its configuration (the crawl's settings adopted) and the record. */
export interface Settled {
  readonly config: CrawlConfig;
  readonly record: SettingsRecord;
  /** True when this node wrote the settings (the crawl's first node, or the first of a new run that changed them). */
  readonly wrote: boolean;
  /** What a new run changed, one line each (`--delay 1000 -> 0`); empty when nothing changed. */
  readonly changed: readonly string[];
}

/**
 * Makes a starting node agree with its crawl (docs/operations.md, "One configuration"): the
 * first node creates the settings file from its options by exclusive create, so that of two
 * nodes starting at the same moment exactly one writes and the other reads what it wrote; a
 * later node adopts the file's settings. An option it was given (`given`, by setting name), or
 * a file only it has (--hook, --cookie-file), that differs from the crawl's is a conflict: while
 * other nodes of the crawl run (`othersAlive`, asked only then), the node refuses
 * (SETTINGS_CONFLICT, exit 2); when none does, it starts a new run with the values it was given
 * and writes them as the next revision (`changed` says which). Call it before anything else the
 * node writes for the crawl.
 */
export async function settleSettings(
  config: CrawlConfig,
  inputs: SettingsInputs,
  given: ReadonlySet<string>,
  othersAlive: () => Promise<readonly string[]> = async () => [],
): Promise<Settled> {
  const mine = settingsOf(config, inputs);
  const path = settingsPath(config.dataDir);
  // Set when another node won an exclusive create this node tried: it is starting at this very
  // moment and may not have a heartbeat yet, so a conflict with it is refused without asking.
  let raced = false;
  for (let attempt = 0; attempt < 3; attempt++) {
    const found = await readSettings(config.dataDir);
    if (found === undefined) {
      const record = next(undefined, config.nodeId, mine);
      if (await createExclusive(nodeMount, path, `${JSON.stringify(record, null, 1)}\n`, config.nodeId))
        return { config, record, wrote: true, changed: [] };
      raced = true;
      continue;
    }
    const differ = conflicts(mine, found.settings, given);
    if (differ.length === 0) return { config: adopt(config, found), record: found, wrote: false, changed: [] };
    const alive = raced ? ['one starting now'] : await othersAlive();
    // A node that started with this one may have written its new run's settings since they
    // were read: a conflict counts only with the latest revision.
    if (alive.length > 0 && !raced && (await readSettings(config.dataDir))?.revision !== found.revision) continue;
    if (alive.length > 0) {
      const more = differ.length > 1 ? ` (and ${differ.length - 1} more)` : '';
      const nodes = raced
        ? 'a node started it at the same moment'
        : alive.length === 1
          ? '1 node of the crawl runs'
          : `${alive.length} nodes of the crawl run`;
      throw new FatalError(
        'SETTINGS_CONFLICT',
        `${differ[0]}${more} and ${nodes}: leave the option out to adopt the crawl's, or change it with mountcrawl config set (mountcrawl config shows them)`,
        ExitCode.USAGE,
      );
    }
    // A new run: what this node was given replaces the crawl's (a --hook or --cookie-file, given
    // or not). One writer per revision, by exclusive create of its claim (a small file left in place).
    const settings = { ...found.settings };
    for (const spec of SETTINGS) if (spec.apply === undefined || given.has(spec.name)) settings[spec.name] = mine[spec.name]!;
    const revision = await claimRevision(config, found.revision);
    if (revision === undefined) {
      raced = true;
      continue;
    }
    const record = { ...next(found, config.nodeId, settings), revision };
    await writeSettings(config.dataDir, record, config.nodeId);
    return { config: adopt(config, record), record, wrote: true, changed: changedLines(found.settings, settings) };
  }
  throw new FatalError('DATA_DIR_UNUSABLE', `${path} can be neither created nor read`, ExitCode.DATA_DIR);
}

/** `--name old -> new` for each setting that differs between two revisions. */
export function changedLines(before: Readonly<Record<string, SettingValue>>, after: Readonly<Record<string, SettingValue>>): string[] {
  return SETTINGS.filter((s) => !sameSetting(before[s.name], after[s.name])).map(
    (s) => `--${s.name} ${settingText(before[s.name])} -> ${settingText(after[s.name])}`,
  );
}

/** How long a node that lost the claim of a revision waits for its winner to write it. */
const CLAIM_WAIT_MS = 2_000;

/**
 * Claims the next revision after `current` by exclusive create of its claim file: the revision
 * number, or undefined when another node claimed it and wrote it meanwhile (it is starting
 * now). A claim whose winner wrote nothing within CLAIM_WAIT_MS (it died, or was stopped at
 * start) is passed over for the revision after it.
 */
async function claimRevision(config: CrawlConfig, current: number): Promise<number | undefined> {
  for (let revision = current + 1; revision <= current + 10; revision++) {
    if (await createExclusive(nodeMount, `${settingsPath(config.dataDir)}.${revision}`, config.nodeId, config.nodeId)) return revision;
    await new Promise((resolve) => setTimeout(resolve, CLAIM_WAIT_MS));
    if ((await readSettings(config.dataDir))?.revision !== current) return undefined;
  }
  throw new FatalError('DATA_DIR_UNUSABLE', `${settingsPath(config.dataDir)}: ten revisions claimed and none written`, ExitCode.DATA_DIR);
}

/** The revision after `before` (1 when there is none), written by `by`. */
function next(before: SettingsRecord | undefined, by: string, settings: Record<string, SettingValue>): SettingsRecord {
  return { format: 1, revision: (before?.revision ?? 0) + 1, writtenBy: by, writtenAt: new Date().toISOString(), settings };
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

function adopt(config: CrawlConfig, found: SettingsRecord): CrawlConfig {
  let out: CrawlConfig = config;
  for (const spec of SETTINGS) {
    if (spec.apply !== undefined && spec.name in found.settings) out = { ...out, ...spec.apply(found.settings[spec.name]!, out) };
  }
  return Object.freeze(out);
}
