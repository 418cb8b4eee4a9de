import { hostname } from 'node:os';
import { LIVE_SETTINGS, SETTINGS, sameSetting, settingNamed, settingText } from '../config/crawl-settings.js';
import { defaultNodeId } from '../config/parse-values.js';
import { readSettings, settingsPath, writeSettings, type SettingsRecord } from '../config/settings-file.js';
import { ExitCode, FatalError, usageError } from '../errors.js';
import { openExistingDataDir } from '../store/data-dir.js';
import { othersAlive } from './node-records.js';

async function settingsOrFail(dataDir: string): Promise<SettingsRecord> {
  await openExistingDataDir(dataDir);
  const record = await readSettings(dataDir);
  if (record === undefined) {
    throw new FatalError(
      'NO_SETTINGS',
      `${settingsPath(dataDir)} does not exist yet: the first mountcrawl crawl writes it`,
      ExitCode.USAGE,
    );
  }
  return record;
}

/** `mountcrawl config`: the crawl's settings, one a line (docs/operations.md), or --json. */
export async function configShowCommand(dataDir: string, json: boolean, out: (line: string) => void): Promise<number> {
  const record = await settingsOrFail(dataDir);
  if (json) {
    out(JSON.stringify(record, null, 1));
    return ExitCode.OK;
  }
  out(`# revision ${record.revision}, written by ${record.writtenBy} at ${record.writtenAt}; * applies to running nodes`);
  for (const spec of SETTINGS) {
    if (!(spec.name in record.settings)) continue;
    out(`${spec.live ? '*' : ' '} ${spec.name.padEnd(22)} ${settingText(record.settings[spec.name])}`);
  }
  return ExitCode.OK;
}

/**
 * `mountcrawl config set NAME VALUE...`: writes the next revision of the settings file whole.
 * Running nodes apply a live setting (LIVE_SETTINGS) within a heartbeat; any other is refused
 * while a node runs (NOT_LIVE, exit 2), and used by nodes that start after it. Two sets at the
 * same moment: the last rename wins and the other change is lost (run `config` to check).
 */
export async function configSetCommand(
  dataDir: string,
  name: string,
  words: readonly string[],
  out: (line: string) => void,
): Promise<number> {
  const spec = settingNamed(name);
  if (spec === undefined)
    throw usageError(`no crawl setting ${JSON.stringify(name)}; the settings: ${SETTINGS.map((s) => s.name).join(', ')}`);
  if (spec.parse === undefined) {
    throw usageError(`--${spec.name} is fixed for a crawl when it starts: every node must be started with the same one`);
  }
  const value = spec.parse(words);
  const record = await settingsOrFail(dataDir);
  const before = record.settings[spec.name];
  if (sameSetting(before, value)) {
    out(`--${spec.name} is ${settingText(value)} already (revision ${record.revision})`);
    return ExitCode.OK;
  }
  const running = spec.live ? [] : await othersAlive(await openExistingDataDir(dataDir), '');
  if (running.length > 0) {
    throw new FatalError(
      'NOT_LIVE',
      `--${spec.name} cannot be changed while nodes run (${running.length} alive; running nodes apply ${LIVE_SETTINGS.join(', ')}): stop the crawl, set it, start again`,
      ExitCode.USAGE,
    );
  }
  const nodeId = defaultNodeId(hostname(), process.pid);
  await writeSettings(
    dataDir,
    {
      ...record,
      revision: record.revision + 1,
      writtenBy: `config set on ${nodeId}`,
      writtenAt: new Date().toISOString(),
      settings: { ...record.settings, [spec.name]: value },
    },
    nodeId,
  );
  const when = spec.live ? 'running nodes apply it within a heartbeat' : 'nodes started from now on use it';
  out(`--${spec.name} ${settingText(before)} -> ${settingText(value)} (revision ${record.revision + 1}): ${when}`);
  return ExitCode.OK;
}
