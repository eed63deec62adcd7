// The arrows between packages, checked on every import: the artist's side (daemon, tray) never
// reaches into the farm's code, Blender and zip handling know nothing of either, and the
// service's domain and adapters never depend on its HTTP layer. The worker is fenced: it sees
// the service's domain and ports, never its adapters or HTTP; from outside, only the start-ups
// reach it, through its composition root; inside, each task handler stands alone and only the
// root assembles them (Python's arrows: python-imports.test.ts).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...(await sourceFiles(rel)));
    else if (/\.(ts|mjs)$/.test(e.name)) out.push(rel);
  }
  return out;
}

/** Every relative import of the files under `dir`, as repository paths of the imported modules. */
async function importsUnder(dir: string): Promise<{ file: string; target: string }[]> {
  const found: { file: string; target: string }[] = [];
  for (const file of await sourceFiles(dir)) {
    const text = await readFile(path.join(root, file), 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      found.push({ file, target: path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)) });
    }
  }
  return found;
}

// The add-on (host-addon/) is Python: its arrows (nothing of the farm's blender/ scripts, only its own
// modules) are checked by python-imports.test.ts, as a rule here would find no file to check.
const RULES: { from: string; never: string[] }[] = [
  { from: 'daemon', never: ['service/'] },
  { from: 'electron', never: ['service/'] },
  { from: 'blender', never: ['service/', 'daemon/', 'cli/'] },
  { from: 'zip', never: ['service/', 'daemon/', 'cli/'] },
  { from: 'user-config', never: ['service/', 'daemon/', 'cli/', 'electron/'] },
  { from: 'shared', never: ['service/', 'daemon/', 'cli/', 'blender/', 'zip/', 'electron/'] },
  { from: 'service/domain', never: ['service/http/', 'service/routes/', 'service/worker/'] },
  { from: 'service/adapters', never: ['service/http/', 'service/routes/', 'service/worker/'] },
  { from: 'service/worker', never: ['service/adapters/', 'service/http/', 'service/routes/', 'service/worker-api/'] },
  // Handlers share what they share through render/, outputs/, project/ and runtime/, never sideways.
  { from: 'service/worker/handlers', never: ['service/worker/handlers/'] },
  // What runs tasks knows no task: the composition root hands it the handlers.
  {
    from: 'service/worker/runtime',
    never: ['service/worker/handlers/', 'service/worker/render/', 'service/worker/start.js'],
  },
  { from: 'service/worker/render', never: ['service/worker/handlers/', 'service/worker/start.js'] },
];

/** The worker's composition root: the one module of the worker that its start-ups import. */
const WORKER_ROOT = 'service/worker/start.js';
/** The start-ups: `renderbridge service` (with its in-process worker) and `renderbridge worker`. */
const START_UPS = ['service/server.ts', 'cli/worker.ts'];
/** Imports of the worker's insides allowed by name, each with why (none now: keep it that way). */
const WORKER_TIES: { file: string; target: string }[] = [];
const PRODUCTION = ['shared', 'user-config', 'service', 'daemon', 'cli', 'electron', 'blender', 'zip'];

describe('package layers', () => {
  it.each(RULES)('nothing under $from/ imports from $never', async ({ from, never }) => {
    // A rule over a folder without TypeScript (host-addon/ is Python) would pass checking nothing.
    expect((await sourceFiles(from)).length, `TypeScript files under ${from}/`).toBeGreaterThan(0);
    const offending = (await importsUnder(from)).filter(({ target }) => never.some((p) => target.startsWith(p)));
    expect(offending).toEqual([]);
  });

  it('only the start-ups import the worker, and only its composition root', async () => {
    const offending: string[] = [];
    for (const dir of PRODUCTION) {
      for (const { file, target } of await importsUnder(dir)) {
        if (!target.startsWith('service/worker/') || file.startsWith('service/worker/')) continue;
        const allowed =
          (START_UPS.includes(file) && target === WORKER_ROOT) ||
          WORKER_TIES.some((t) => t.file === file && t.target === target);
        if (!allowed) offending.push(`${file} -> ${target}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('only the composition root imports the handlers', async () => {
    const offending = (await importsUnder('service/worker'))
      .filter(
        ({ file, target }) =>
          target.startsWith('service/worker/handlers/') &&
          !file.startsWith('service/worker/handlers/') &&
          `${file.replace(/\.ts$/, '.js')}` !== WORKER_ROOT,
      )
      .map(({ file, target }) => `${file} -> ${target}`);
    expect(offending).toEqual([]);
  });

  it('the ties allowed by name are still there (else drop them from the list)', async () => {
    for (const t of WORKER_TIES) {
      expect(
        (await importsUnder(path.posix.dirname(t.file))).some((i) => i.file === t.file && i.target === t.target),
        t.file,
      ).toBe(true);
    }
  });

  it('has no re-export facades: importers name the module that defines what they use', async () => {
    const facades: string[] = [];
    for (const dir of PRODUCTION) {
      for (const file of await sourceFiles(dir)) {
        if (/^export\s+(\*|(type\s+)?\{[^}]*\})\s+from\s/m.test(await readFile(path.join(root, file), 'utf8')))
          facades.push(file);
      }
    }
    expect(facades).toEqual([]);
  });

  it('finds the imports it checks (the scan itself works)', async () => {
    const seen = await importsUnder('daemon');
    expect(seen.some(({ target }) => target.startsWith('shared/'))).toBe(true);
    expect(seen.some(({ target }) => target.startsWith('blender/'))).toBe(true);
  });
});
