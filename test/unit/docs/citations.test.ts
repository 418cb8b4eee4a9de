import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

// dist/test/unit/docs/ -> the repository.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function files(dir: string, ends: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (statSync(join(ROOT, rel)).isDirectory()) return files(rel, ends);
    return rel.endsWith(ends) ? [rel] : [];
  });
}

/** What a section of a doc can be cited by: its headings and the bold lead-ins of its paragraphs and items. */
function sectionsOf(doc: string): string[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const headings = [...text.matchAll(/^#+\s+(.+)$/gm)].map((m) => m[1]!);
  const bold = [...text.matchAll(/^(?:- |\d+\. )?\*\*([^*]+)\*\*/gm)].map((m) => m[1]!);
  return [...headings, ...bold].map(fold);
}

/** Case, backquotes, comment stars and line breaks do not matter. */
function fold(s: string): string {
  return s
    .replace(/\n\s*(\*|\/\/)?\s*/g, ' ')
    .replace(/[`]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

test('every citation of a docs section (docs/NAME.md, "Section") names a heading or bold lead-in of that doc', () => {
  // The history (docs/benchmarks-log.md) cites as it was written; everything else must resolve.
  const citing = [
    ...files('src', '.ts'),
    ...files('bench', '.ts'),
    ...files('test', '.ts'),
    ...files('docs', '.md'),
    'README.md',
    'CHANGELOG.md',
  ].filter((f) => f !== 'docs/benchmarks-log.md');
  const known = new Map<string, string[]>();
  let cited = 0;
  const broken: string[] = [];
  for (const file of citing) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/(docs\/[a-z0-9-]+\.md),(\s|\n\s*(?:\*|\/\/)\s*)*"([^"]+)"/g)) {
      const doc = m[1]!;
      const section = fold(m[3]!);
      if (!known.has(doc)) known.set(doc, sectionsOf(doc));
      cited++;
      if (!known.get(doc)!.some((s) => s.startsWith(section))) broken.push(`${file}: ${doc}, "${m[3]}"`);
    }
  }
  assert.ok(cited >= 100, `only ${cited} citations found`);
  assert.deepEqual(broken, []);
});
