/**
 * A scanner for the start tags and attributes of HTML, for link extraction: it reports what
 * htmlparser2's Tokenizer (version 10, `decodeEntities: false`, HTML mode) would report as start
 * tags, their attributes and their ends, and nothing else (no text, comments or end tags), and
 * it skips everything else with `indexOf` jumps instead of a callback per state change. Its
 * rules are the tokenizer's, quirks included, so that a page yields exactly the links it did
 * before; test/unit/extract/tag-scanner.test.ts compares the two on every construct and on random
 * documents. The quirks kept on purpose:
 *
 * - `<!` starts a declaration that runs to the next `>` after the character following `<!`
 *   (so `<!>` runs on to the next `>`), `<!--` a comment that ends at the first `-->` counted
 *   from the `<!` plus two (so `<!-->` and `<!--->` are whole comments), `<![CDATA[` a section
 *   that ends at `]]>`, `<?` an instruction that ends at `>`.
 * - `<script>`, `<style>`, `<title>`, `<textarea>` and `<xmp>` hold raw text up to their end
 *   tag; a name of `t` or `x` followed by `itle`, `extarea` or `mp` counts (`<tmp>` holds raw
 *   text up to `</xmp`). The end tag is matched with `c | 0x20`, so U+001C stands for `<` and
 *   U+000F for `/` where the matcher looks at them one by one: in title always, in the others
 *   only right after the start tag or a partial match (elsewhere it jumps to the next `<`).
 * - A self-closed `<script/>` holds no raw text.
 * - A tag cut off by the end of the document is not reported as ended.
 */

/** Receives the start tags of a document, in order. Positions index the scanned string. */
export interface TagSink {
  /**
   * A start tag named `text.slice(start, end)` (as written: case is the sink's business).
   * Return true to be told its attributes and its end; false skips them (the scanner still
   * reads them, to find where the tag ends).
   */
  openTag(start: number, end: number): boolean;
  /**
   * An attribute of the last tag opened and wanted: name `text.slice(nameStart, nameEnd)`,
   * value `text.slice(valueStart, valueEnd)` as written, character references not decoded
   * (empty for a name without a value). Repeated names are reported each time.
   */
  attribute(nameStart: number, nameEnd: number, valueStart: number, valueEnd: number): void;
  /** The last tag opened and wanted ended with `>` or `/>`. A tag the document cuts off never ends. */
  tagEnd(): void;
}

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const EQ = 0x3d;
const DQ = 0x22;
const SQ = 0x27;

/** HTML white space as the tokenizer counts it (no U+000B). */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
}

/** Ends a tag or attribute name: white space, `/` or `>`. */
function endsName(c: number): boolean {
  return c === SLASH || c === GT || isSpace(c);
}

function isAsciiAlpha(c: number): boolean {
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x7a;
}

/** Whether `text.slice(start, end)` is `name` (lowercase ASCII letters) in any case: for tag and attribute names. */
export function nameIs(text: string, start: number, end: number, name: string): boolean {
  if (end - start !== name.length) return false;
  for (let k = 0; k < name.length; k++) if ((text.charCodeAt(start + k) | 0x20) !== name.charCodeAt(k)) return false;
  return true;
}

/**
 * The end tag that closes the raw text of the start tag named `text.slice(start, end)`, as the
 * tokenizer decides it from the first two letters and the length, or undefined for other tags.
 */
function rawTextEndOf(text: string, start: number, end: number): string | undefined {
  const first = text.charCodeAt(start) | 0x20;
  if (first === 0x73) {
    // s
    if (nameIs(text, start + 1, end, 'cript')) return '</script';
    if (nameIs(text, start + 1, end, 'tyle')) return '</style';
  } else if (first === 0x74 || first === 0x78) {
    // t or x: the tokenizer does not look back at which one it was
    if (nameIs(text, start + 1, end, 'itle')) return '</title';
    if (nameIs(text, start + 1, end, 'extarea')) return '</textarea';
    if (nameIs(text, start + 1, end, 'mp')) return '</xmp';
  }
  return undefined;
}

/**
 * Where the text resumes after raw text that starts at `i` and ends with `endTag`, or -1 if
 * the document ends first. The tokenizer's matcher, step for step: it compares one character
 * at a time while a match is under way and jumps to the next `<` otherwise (never in title).
 */
function skipRawText(text: string, i: number, endTag: string): number {
  const n = text.length;
  const perChar = endTag === '</title';
  let matched = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (matched === endTag.length) {
      if (c === GT || isSpace(c)) {
        const gt = text.indexOf('>', i);
        return gt < 0 ? -1 : gt + 1;
      }
      matched = 0;
    }
    if ((c | 0x20) === endTag.charCodeAt(matched)) matched++;
    else if (matched !== 0) matched = c === LT ? 1 : 0;
    else if (!perChar) {
      const lt = text.indexOf('<', i + 1);
      if (lt < 0) return -1;
      i = lt;
      matched = 1;
    }
    i++;
  }
  return -1;
}

/** Where the text resumes after `<!` at `lt`, or -1 if the document ends first. */
function skipDeclaration(text: string, lt: number): number {
  const n = text.length;
  if (lt + 2 >= n) return -1;
  const c = text.charCodeAt(lt + 2);
  let gtFrom: number;
  if (c === 0x2d) {
    // <!- : a comment if another dash follows; a declaration from the character after otherwise
    if (lt + 3 >= n) return -1;
    if (text.charCodeAt(lt + 3) === 0x2d) {
      const close = text.indexOf('-->', lt + 2);
      return close < 0 ? -1 : close + 3;
    }
    gtFrom = lt + 4;
  } else if (c === 0x5b) {
    // <![ : CDATA[ matched exactly, else a declaration from the first character that differs
    const cdata = 'CDATA[';
    let k = 0;
    while (k < cdata.length) {
      if (lt + 3 + k >= n) return -1;
      if (text.charCodeAt(lt + 3 + k) !== cdata.charCodeAt(k)) break;
      k++;
    }
    if (k === cdata.length) {
      const close = text.indexOf(']]>', lt + 9);
      return close < 0 ? -1 : close + 3;
    }
    gtFrom = lt + 3 + k;
  } else {
    gtFrom = lt + 3;
  }
  const gt = text.indexOf('>', gtFrom);
  return gt < 0 ? -1 : gt + 1;
}

/**
 * Reads the attributes of a start tag from `i` (just after its name) to its end. Returns where
 * the text resumes (after the `>`), or -1 if the document ends first; `selfClosed` tells
 * whether it ended with `/>`. Attributes go to `sink` only when `wanted`.
 */
function scanAttributes(text: string, i: number, sink: TagSink, wanted: boolean, out: { selfClosed: boolean }): number {
  const n = text.length;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (c === GT) {
      out.selfClosed = false;
      return i + 1;
    }
    if (c === SLASH) {
      // `/` then white space: still self-closing if `>` comes; anything else starts an attribute
      i++;
      while (i < n && isSpace(text.charCodeAt(i))) i++;
      if (i >= n) return -1;
      if (text.charCodeAt(i) === GT) {
        out.selfClosed = true;
        return i + 1;
      }
      continue;
    }
    if (isSpace(c)) {
      i++;
      continue;
    }
    // An attribute name: its first character is taken whatever it is (`=` and quotes included).
    const nameStart = i;
    i++;
    while (i < n && !endsName((c = text.charCodeAt(i))) && c !== EQ) i++;
    if (i >= n) return -1;
    const nameEnd = i;
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (i >= n) return -1;
    if (text.charCodeAt(i) !== EQ) {
      // a name alone; what follows is read again as the start of the next attribute
      if (wanted) sink.attribute(nameStart, nameEnd, nameEnd, nameEnd);
      continue;
    }
    i++;
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (i >= n) return -1;
    c = text.charCodeAt(i);
    if (c === DQ || c === SQ) {
      const close = text.indexOf(c === DQ ? '"' : "'", i + 1);
      if (close < 0) return -1;
      if (wanted) sink.attribute(nameStart, nameEnd, i + 1, close);
      i = close + 1;
    } else {
      // unquoted: up to white space or `>` (a `/` belongs to the value)
      const valueStart = i;
      while (i < n && !isSpace((c = text.charCodeAt(i))) && c !== GT) i++;
      if (i >= n) return -1;
      if (wanted) sink.attribute(nameStart, nameEnd, valueStart, i);
    }
  }
  return -1;
}

/**
 * Scans `text` for start tags and tells `sink` about each, with the attributes and end of the
 * ones it wants. Everything but start tags (text, comments, declarations, end tags, raw text)
 * is skipped.
 */
export function scanTags(text: string, sink: TagSink): void {
  const n = text.length;
  const out = { selfClosed: false };
  let i = 0;
  while (i < n) {
    const lt = text.indexOf('<', i);
    if (lt < 0 || lt + 1 >= n) return;
    const c = text.charCodeAt(lt + 1);
    if (isAsciiAlpha(c)) {
      const start = lt + 1;
      let end = start + 1;
      while (end < n && !endsName(text.charCodeAt(end))) end++;
      if (end >= n) return;
      const wanted = sink.openTag(start, end);
      i = scanAttributes(text, end, sink, wanted, out);
      if (i < 0) return;
      if (wanted) sink.tagEnd();
      if (!out.selfClosed) {
        const endTag = rawTextEndOf(text, start, end);
        if (endTag !== undefined) {
          i = skipRawText(text, i, endTag);
          if (i < 0) return;
        }
      }
    } else if (c === 0x21) {
      // <!
      i = skipDeclaration(text, lt);
      if (i < 0) return;
    } else if (c === SLASH || c === 0x3f) {
      // an end tag, `</>` or a bogus comment; `<?` an instruction: each ends at the next `>`
      const gt = text.indexOf('>', lt + 2);
      if (gt < 0) return;
      i = gt + 1;
    } else {
      i = lt + 1;
    }
  }
}
