import type { CrawlConfig } from './crawl-config.js';
import { SETTINGS, sameSetting, settingText, type SettingValue } from './crawl-settings.js';
import type { SettingsRecord } from './settings-file.js';

/**
 * The settings a running node applies when `mountcrawl config set` changes them
 * (docs/operations.md, "Changing a setting"): --delay, --per-host (up to the value the node
 * started with: its connections per host are opened at start) and --max-pages. The node reads
 * them at each use, through the getters of `config`; every other field stays as it started.
 */
export class LiveSettings {
  readonly config: CrawlConfig;
  #delayMs: number;
  #perHost: number;
  #maxPages: number;
  #revision: number;
  #settings: Readonly<Record<string, SettingValue>>;

  constructor(
    private readonly started: CrawlConfig,
    record: SettingsRecord,
  ) {
    this.#delayMs = started.delayMs;
    this.#perHost = started.perHost;
    this.#maxPages = started.maxPages;
    this.#revision = record.revision;
    this.#settings = record.settings;
    this.config = Object.freeze(
      Object.defineProperties(
        { ...started },
        {
          delayMs: { get: () => this.#delayMs, enumerable: true },
          perHost: { get: () => this.#perHost, enumerable: true },
          maxPages: { get: () => this.#maxPages, enumerable: true },
        },
      ),
    );
  }

  get revision(): number {
    return this.#revision;
  }

  /**
   * Takes a newer revision of the settings file: applies the live settings and returns one line
   * per change, saying which apply now and which only at the node's next start.
   */
  apply(record: SettingsRecord): string[] {
    if (record.revision <= this.#revision) return [];
    const lines: string[] = [];
    for (const spec of SETTINGS) {
      const before = this.#settings[spec.name];
      const now = record.settings[spec.name];
      if (sameSetting(before, now)) continue;
      const change = `--${spec.name} ${settingText(before)} -> ${settingText(now)}`;
      if (spec.name === 'delay') this.#delayMs = Number(now);
      else if (spec.name === 'max-pages') this.#maxPages = now === 'unlimited' ? Infinity : Number(now);
      else if (spec.name === 'per-host') {
        this.#perHost = Math.min(Number(now), this.started.perHost);
        if (this.#perHost < Number(now)) {
          lines.push(`${change}: applied as ${this.#perHost} until this node starts again (its connections per host)`);
          continue;
        }
      } else {
        lines.push(`${change}: applies when this node starts again`);
        continue;
      }
      lines.push(`${change}: applied`);
    }
    this.#revision = record.revision;
    this.#settings = record.settings;
    return lines;
  }
}
