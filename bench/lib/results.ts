// Tables for the console and bench/RESULTS.md. Each benchmark owns one section of the file,
// delimited by HTML comments, and replaces only that section so the others survive a run.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const RESULTS_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'RESULTS.md');

const HEADER = `# Benchmark results

Written by \`npm run bench:api\` and \`npm run bench:upload\`; each run replaces its own section.
These are benchmarks, not tests: they never run in the test suite.
`;

export type Row = Record<string, string>;

/** Every column of any row, in first-seen order (rows of different steps have different columns). */
function columns(rows: Row[]): string[] {
  return [...new Set(rows.flatMap((r) => Object.keys(r)))];
}

function widths(rows: Row[], cols: string[]): number[] {
  return cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length)));
}

export function consoleTable(rows: Row[]): string {
  const cols = columns(rows);
  const w = widths(rows, cols);
  const line = (cells: string[]) => cells.map((s, i) => s.padEnd(w[i]!)).join('  ');
  return [line(cols), line(w.map((n) => '-'.repeat(n))), ...rows.map((r) => line(cols.map((c) => r[c] ?? '')))].join(
    '\n',
  );
}

export function markdownTable(rows: Row[]): string {
  const cols = columns(rows);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(cols),
    line(cols.map(() => '---')),
    ...rows.map((r) => line(cols.map((c) => (r[c] ?? '').replace(/\|/g, '\\|')))),
  ].join('\n');
}

/** Replaces (or appends) the section `id` of RESULTS.md with `## title` and `body`. */
export async function writeResultsSection(id: string, title: string, body: string, file = RESULTS_FILE): Promise<void> {
  const start = `<!-- bench:${id}:start -->`;
  const end = `<!-- bench:${id}:end -->`;
  const section = `${start}\n## ${title}\n\n${body.trim()}\n${end}`;
  let text = existsSync(file) ? await readFile(file, 'utf8') : HEADER;
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a >= 0 && b > a) text = text.slice(0, a) + section + text.slice(b + end.length);
  else text = `${text.trimEnd()}\n\n${section}\n`;
  await writeFile(file, text);
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  ms: (n: number) => `${n} ms`,
  pct: (n: number) => `${(n * 100).toFixed(0)}%`,
  mbps: (n: number) => `${n.toFixed(0)} MB/s`,
  mib: (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`,
};

export function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'FAIL';
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
