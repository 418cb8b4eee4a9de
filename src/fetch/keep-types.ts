import { ExitCode, FatalError } from '../errors.js';

/** A media type (`type/subtype`) or a whole type (`image/*`). */
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/(\*|[a-z0-9!#$&^_.+-]+)$/;

/**
 * Parses `--keep TYPE,...`: media types of non-HTML responses whose bodies are stored in
 * files/ (`application/pdf`, `image/*`). Throws BAD_OPTION for one that is not a media type.
 */
export function parseKeepTypes(raw: string): readonly string[] {
  const types = raw
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '');
  for (const t of types) {
    if (!MEDIA_TYPE.test(t))
      throw new FatalError('BAD_OPTION', `--keep ${JSON.stringify(t)}: not a media type (e.g. application/pdf, image/*)`, ExitCode.USAGE);
  }
  return types;
}

/** True when `mediaType` is one of `keep` (exactly, or by a `type/*` entry). */
export function keeps(keep: readonly string[] | undefined, mediaType: string | null): boolean {
  if (keep === undefined || keep.length === 0 || mediaType === null) return false;
  const slash = mediaType.indexOf('/');
  return keep.includes(mediaType) || (slash > 0 && keep.includes(`${mediaType.slice(0, slash)}/*`));
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'application/pdf': 'pdf',
  'application/zip': 'zip',
  'application/json': 'json',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'text/plain': 'txt',
  'text/csv': 'csv',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
};

/** The file name extension of a kept body (`bin` when the type is not a common one). */
export function extensionOf(mediaType: string | null): string {
  return (mediaType !== null ? EXTENSIONS[mediaType] : undefined) ?? 'bin';
}
