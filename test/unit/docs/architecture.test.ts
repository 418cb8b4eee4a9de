import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

// dist/test/unit/docs/ -> the repository.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}
const SRC = new Map(sources(join(ROOT, 'src')).map((p) => [p.slice(ROOT.length), readFileSync(p, 'utf8')]));

/** True when some source file defines the class, function, method or interface member `name`. */
function defined(name: string, inFile?: string): boolean {
  const re = new RegExp(
    `(class|function|interface|type|const) ${name}\\b|^\\s*(async |static |get |override |readonly )*#?${name}\\s*[(<:?]`,
    'm',
  );
  const files = inFile === undefined ? [...SRC.values()] : [SRC.get(inFile) ?? ''];
  return files.some((text) => re.test(text));
}

test('docs/architecture.md: every source file it names exists', () => {
  const paths = new Set(DOC.match(/src\/[a-z0-9/._-]+\.ts/g) ?? []);
  assert.ok(paths.size >= 20, `only ${paths.size} paths found`);
  for (const p of paths) assert.ok(existsSync(join(ROOT, p)), `${p} is named in docs/architecture.md and does not exist`);
});

test("docs/architecture.md: a page's journey names six files, and each hop's names are defined where it says", () => {
  const rows = DOC.split('\n').filter((l) => /^\| [0-9]+ \| `src\//.test(l));
  assert.equal(rows.length, 6, 'six files');
  for (const row of rows) {
    const file = /`(src\/[^`]+\.ts)`/.exec(row)![1]!;
    const hop = row.split(' | ').at(-1)!;
    // The first name of the hop is defined in the file of its row.
    const first = /`([A-Za-z]+)(?:\.([A-Za-z#]+))?`/.exec(hop);
    assert.ok(first, `no name in: ${row}`);
    const name = first[2] ?? first[1]!;
    assert.ok(defined(name, file), `${name} is not defined in ${file}`);
  }
});

test('docs/architecture.md: every Class.method it names is defined', () => {
  const names = new Set([...DOC.matchAll(/`([A-Z][A-Za-z]+)\.(#?[a-z][A-Za-z]+)`/g)].map((m) => [m[1]!, m[2]!] as const));
  assert.ok(names.size >= 8, `only ${names.size} names found`);
  for (const [cls, member] of names) {
    assert.ok(defined(cls), `class ${cls} (docs/architecture.md) is not defined`);
    assert.ok(defined(member.replace('#', '')), `${cls}.${member} (docs/architecture.md) is not defined`);
  }
});
