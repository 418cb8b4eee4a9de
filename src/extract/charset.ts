import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { getEncoding } from 'encoding-sniffer/sniffer'; // not the index: it loads iconv-lite, which is not used

/** How far into a body the HTML encoding prescan looks for a <meta charset>. */
const PRESCAN_BYTES = 4096;

/** A label no page declares by accident: getEncoding returns it when it found nothing. */
const NOT_FOUND = 'x-user-defined';

/** The `charset` parameter of a Content-Type header, if any. */
export function charsetOfContentType(contentType: string | null | undefined): string | undefined {
  if (!contentType) return undefined;
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return m?.[1];
}

/**
 * The character encoding of an HTML body (WHATWG encoding sniffing, through encoding-sniffer):
 * a byte order mark first, then the Content-Type charset, then a `<meta charset>` or
 * `http-equiv` in the first 4 KiB. Two repairs for the real web: a page that declares nothing
 * is UTF-8 when its bytes are valid UTF-8 and windows-1252 otherwise, and a page whose header
 * says UTF-8 but whose bytes are not UTF-8 falls back to its meta tag (or windows-1252).
 * Returns a WHATWG encoding name (`UTF-8`, `Shift_JIS`, `windows-1252`, ...).
 */
export function sniffCharset(body: Uint8Array, contentType: string | null | undefined, truncated: boolean): string {
  const head = body.subarray(0, PRESCAN_BYTES);
  const transport = charsetOfContentType(contentType);
  // With a charset in the header only a byte order mark can overrule it: no need to prescan
  // 4 KiB for a <meta> (the UTF-8 check below still catches a header that lies).
  const found = getEncoding(Buffer.from(head.buffer, head.byteOffset, head.byteLength), {
    maxBytes: transport === undefined ? PRESCAN_BYTES : 4,
    transportLayerEncodingLabel: transport,
    defaultEncoding: NOT_FOUND,
  });
  const validUtf8 = (): boolean => isUtf8(truncated ? completeUtf8Prefix(body) : body);
  if (found === NOT_FOUND) return validUtf8() ? 'UTF-8' : 'windows-1252';
  if (found === 'UTF-8' && transport !== undefined && !hasUtf8Bom(body) && !validUtf8()) {
    const declared = getEncoding(Buffer.from(head.buffer, head.byteOffset, head.byteLength), {
      maxBytes: PRESCAN_BYTES,
      defaultEncoding: NOT_FOUND,
    });
    return declared === NOT_FOUND || declared === 'UTF-8' ? 'windows-1252' : declared;
  }
  return found;
}

function hasUtf8Bom(b: Uint8Array): boolean {
  return b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
}

/** `b` without a UTF-8 sequence cut off at its end (a body truncated at --max-bytes). */
export function completeUtf8Prefix(b: Uint8Array): Uint8Array {
  for (let back = 1; back <= 4 && back <= b.length; back++) {
    const byte = b[b.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? b.subarray(0, b.length - back) : b;
  }
  return b;
}

/** Encodings in which ASCII bytes always mean ASCII characters, so markup can be read bytewise. */
export function isAsciiCompatible(encoding: string): boolean {
  const e = encoding.toLowerCase();
  return !(e.startsWith('utf-16') || e.startsWith('iso-2022') || e === 'replacement');
}

const decoders = new Map<string, TextDecoder>();

/**
 * windows-1252 bytes 0x80 to 0x9F (WHATWG index): Node.js since 20.18.3 decodes that label as
 * ISO-8859-1 and gives C1 controls for them (nodejs/node#56542, #60888), so they are mapped
 * here. The five bytes the index leaves undefined map to themselves.
 */
const WINDOWS_1252_C1 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** Decodes bytes in `encoding` (a WHATWG name), falling back to UTF-8 for an unknown one. */
export function decodeBytes(bytes: Uint8Array, encoding: string): string {
  let d = decoders.get(encoding);
  if (d === undefined) {
    try {
      d = new TextDecoder(encoding);
    } catch {
      d = new TextDecoder('utf-8');
    }
    decoders.set(encoding, d);
  }
  const text = d.decode(bytes);
  if (d.encoding !== 'windows-1252') return text;
  return text.replace(/[\x80-\x9f]/g, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80]!);
}
