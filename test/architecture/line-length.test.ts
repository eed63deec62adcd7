// Lines stay at or under 120 characters (CONTRIBUTING.md, "Code"). ESLint's max-len checks TypeScript and
// JavaScript and flake8 the Python (both run by `npm run lint`); this test checks the Markdown, which no
// linter here reads. Exempt: table rows (a row cannot wrap) and lines holding a URL (a link cannot break),
// as max-len's ignoreUrls does; bench/RESULTS.md, which the benchmarks write.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAX = 120;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'out', 'coverage']);
const GENERATED = new Set(['bench/RESULTS.md']);

async function markdownFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    if (e.name.startsWith('.') || SKIP_DIRS.has(e.name)) continue;
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await markdownFiles(rel)));
    else if (e.name.endsWith('.md') && !GENERATED.has(rel)) out.push(rel);
  }
  return out;
}

/** `file:line (n characters)` for each line of `text` over MAX that is neither a table row nor holds a URL. */
function longLines(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => {
    if (line.length <= MAX || /^\s*\|/.test(line) || /https?:\/\//.test(line)) return [];
    return [`${file}:${i + 1} (${line.length} characters)`];
  });
}

describe('line length', () => {
  it(`keeps Markdown lines at or under ${MAX} characters, outside tables and URLs`, async () => {
    const files = await markdownFiles('');
    expect(files).toContain('CONTRIBUTING.md');
    const long: string[] = [];
    for (const file of files) long.push(...longLines(file, await readFile(path.join(root, file), 'utf8')));
    expect(long).toEqual([]);
  });
});
