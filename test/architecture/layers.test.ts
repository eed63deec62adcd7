// The arrows between packages, checked on every import: the artist's side (daemon, tray) never
// reaches into the farm's code, Blender and zip handling know nothing of either, and the
// service's domain and adapters never depend on its HTTP layer.
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

const RULES: { from: string; never: string[] }[] = [
  { from: 'daemon', never: ['service/'] },
  { from: 'electron', never: ['service/'] },
  { from: 'host-addon', never: ['service/'] },
  { from: 'blender', never: ['service/', 'daemon/', 'cli/'] },
  { from: 'zip', never: ['service/', 'daemon/', 'cli/'] },
  { from: 'user-config', never: ['service/', 'daemon/', 'cli/', 'electron/'] },
  { from: 'shared', never: ['service/', 'daemon/', 'cli/', 'blender/', 'zip/', 'electron/'] },
  { from: 'service/domain', never: ['service/http/', 'service/routes/', 'service/worker/'] },
  { from: 'service/adapters', never: ['service/http/', 'service/routes/', 'service/worker/'] },
];

describe('package layers', () => {
  it.each(RULES)('nothing under $from/ imports from $never', async ({ from, never }) => {
    const offending = (await importsUnder(from)).filter(({ target }) => never.some((p) => target.startsWith(p)));
    expect(offending).toEqual([]);
  });

  it('has no re-export facades: importers name the module that defines what they use', async () => {
    const facades: string[] = [];
    for (const dir of ['shared', 'user-config', 'service', 'daemon', 'cli', 'electron', 'blender', 'zip']) {
      for (const file of await sourceFiles(dir)) {
        if (/^export\s+(\*|(type\s+)?\{[^}]*\})\s+from\s/m.test(await readFile(path.join(root, file), 'utf8'))) facades.push(file);
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
