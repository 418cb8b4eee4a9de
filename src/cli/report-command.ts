import { resolve } from 'node:path';
import { ExitCode, FatalError, describeError } from '../errors.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { nodeMount } from '../store/mount.js';
import { collectReport } from '../report/report-data.js';
import { renderReport } from '../report/report-html.js';

/** Where `report` writes when --out is not given. */
export const DEFAULT_REPORT_FILE = 'mountcrawl-report.html';

/**
 * `mountcrawl report`: one self-contained HTML file of a data directory (finished or being
 * written), or with --json the same numbers as JSON (to --out, or stdout).
 */
export async function reportCommand(
  dataDir: string,
  options: { out?: string | undefined; json: boolean },
  out: (line: string) => void,
): Promise<number> {
  const started = Date.now();
  const report = await collectReport(dataDir);
  const text = options.json ? `${JSON.stringify(report, null, 1)}\n` : renderReport(report);
  if (options.json && options.out === undefined) {
    out(text.trimEnd());
    return 0;
  }
  const file = resolve(options.out ?? DEFAULT_REPORT_FILE);
  try {
    await writeFileAtomic(nodeMount, file, text, { nodeId: 'report', fsync: false });
  } catch (err) {
    throw new FatalError('REPORT_NOT_WRITTEN', `cannot write ${file}: ${describeError(err)}`, ExitCode.USAGE);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `mountcrawl: report ${file}: ${report.totals.pages} pages, ${report.totals.errors} errors, ${report.totals.hosts} hosts (${seconds} s)\n`,
  );
  return 0;
}
