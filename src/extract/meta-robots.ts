/**
 * Robots directives of one page (https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag,
 * as most crawlers read them): `nofollow` (do not follow its links) and `noindex` (do not keep
 * it), from `<meta name="robots" content="...">` and from the `X-Robots-Tag` response header.
 * `none` means both. Directives for one named crawler (`googlebot: noindex` in the header,
 * `<meta name="googlebot">`) are not ours and are ignored.
 */
export interface RobotsDirectives {
  readonly nofollow: boolean;
  readonly noindex: boolean;
}

export const NO_DIRECTIVES: RobotsDirectives = Object.freeze({ nofollow: false, noindex: false });

/** The directives in a comma-separated list (`noindex, nofollow`, `none`). */
export function parseRobotsContent(content: string): RobotsDirectives {
  const tokens = content
    .toLowerCase()
    .split(',')
    .map((t) => t.trim());
  const none = tokens.includes('none');
  return { nofollow: none || tokens.includes('nofollow'), noindex: none || tokens.includes('noindex') };
}

/**
 * The directives of `X-Robots-Tag` header values. A value may name a crawler first
 * (`otherbot: noindex`): such values are skipped; a value whose first token is itself a
 * directive applies to every crawler (`unavailable_after: <date>` is not a name).
 */
export function parseXRobotsTag(header: string | readonly string[] | undefined): RobotsDirectives {
  if (header === undefined) return NO_DIRECTIVES;
  let nofollow = false;
  let noindex = false;
  for (const value of typeof header === 'string' ? [header] : header) {
    const m = /^\s*([a-z0-9_-]+)\s*:(.*)$/i.exec(value);
    if (m !== null && !['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview'].includes(m[1]!.toLowerCase()))
      continue;
    const d = parseRobotsContent(value);
    nofollow ||= d.nofollow;
    noindex ||= d.noindex;
  }
  return { nofollow, noindex };
}

/** Both sets of directives together. */
export function mergeDirectives(a: RobotsDirectives, b: RobotsDirectives): RobotsDirectives {
  return { nofollow: a.nofollow || b.nofollow, noindex: a.noindex || b.noindex };
}
