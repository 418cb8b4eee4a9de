/** Signatures of binary formats that servers sometimes label text/html. */
const SIGNATURES: readonly (readonly number[])[] = [
  [0x89, 0x50, 0x4e, 0x47], // PNG
  [0x47, 0x49, 0x46, 0x38], // GIF8
  [0xff, 0xd8, 0xff], // JPEG
  [0x25, 0x50, 0x44, 0x46], // %PDF
  [0x50, 0x4b, 0x03, 0x04], // ZIP (docx, jar, ...)
  [0x1f, 0x8b], // gzip that was not declared as Content-Encoding
  [0x52, 0x49, 0x46, 0x46], // RIFF (WebP, WAV, AVI)
  [0x7f, 0x45, 0x4c, 0x46], // ELF
  [0x00, 0x00, 0x01, 0x00], // ICO
];

function startsWith(b: Uint8Array, sig: readonly number[]): boolean {
  if (b.length < sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[i] !== sig[i]) return false;
  return true;
}

/** How many leading bytes are checked. */
const SNIFF_BYTES = 1024;

/**
 * True when a body that was served as HTML is in fact binary: it starts with a known binary
 * signature, or has a NUL byte in its first 1 KiB (HTML text never does, except in UTF-16,
 * which is recognised by its byte order mark). Such a body is never parsed.
 */
export function looksBinary(body: Uint8Array): boolean {
  if (body.length >= 2 && ((body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xfe && body[1] === 0xff))) {
    return false; // UTF-16 with a BOM: NUL bytes are expected
  }
  const head = body.subarray(0, SNIFF_BYTES);
  for (const sig of SIGNATURES) {
    if (startsWith(head, sig)) return true;
  }
  return head.includes(0);
}
