// The arrows between the Python packages, as layers.test.ts checks them for TypeScript. The
// add-on (host-addon/renderbridge) ships alone in a zip, so it imports only its own modules; the
// scripts Blender runs on the farm (blender/) import their own folder's modules and the path
// remaps, and reach into the add-on only where named below: one collector of a project's files
// and one rule for Blender's own files, shared by the artist's side and the analysis. Inside the
// add-on no module imports itself back through others: a circle makes what runs at `register`
// depend on the order of imports.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ADDON = 'host-addon/renderbridge';

async function pythonFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory() && e.name !== '__pycache__') out.push(...(await pythonFiles(rel)));
    else if (e.name.endsWith('.py')) out.push(rel);
  }
  return out;
}

interface PyImport {
  /** The module's top-level name; '.' plus a name for a relative import of the same package. */
  name: string;
  line: number;
}

/** Every import statement of a file, at any indentation (a lazy import is an arrow too). */
function pythonImports(text: string): PyImport[] {
  const found: PyImport[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*$/, '');
    const from = /^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?([^)]*)/.exec(line);
    if (from) {
      const [, dots, mod, names] = from;
      // `from . import a, b` names modules; `from .a import x` and `from a import x` name `a`.
      if (dots && !mod)
        for (const n of names!.split(',')) found.push({ name: `.${n.trim().split(/\s+/)[0]}`, line: i + 1 });
      else found.push({ name: `${dots ? '.' : ''}${mod!.split('.')[0]}`, line: i + 1 });
      continue;
    }
    const plain = /^\s*import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)/.exec(line);
    if (plain) for (const n of plain[1]!.split(',')) found.push({ name: n.trim().split(/[\s.]/)[0]!, line: i + 1 });
  }
  return found.filter((f) => f.name !== '.' && f.name !== '');
}

const stem = (file: string) => path.posix.basename(file, '.py');

/** The imports of blender/ allowed into the add-on, by importing file and module name. */
const ADDON_TIES = [
  // The collector of a project's files (trace_deps runs it inside the artist's Blender session).
  { file: 'blender/trace/trace_deps.py', name: 'renderbridge' },
  // Which files are Blender's own: one rule for the collector and the analysis.
  { file: 'blender/analysis/analyze_files.py', name: 'blender_own' },
];
/** Folders of blender/ whose scripts use the packer's path remaps (blender/remap). */
const REMAP_USERS = ['blender/render', 'blender/analysis'];

describe('Python import rules', () => {
  it('the add-on imports nothing of blender/ and nothing outside its own package', async () => {
    const own = new Set((await pythonFiles(ADDON)).map(stem));
    const farm = new Set((await pythonFiles('blender')).map(stem));
    const offending: string[] = [];
    for (const file of await pythonFiles(ADDON)) {
      for (const imp of pythonImports(await readFile(path.join(root, file), 'utf8'))) {
        const name = imp.name.replace(/^\./, '');
        if (farm.has(name) && !own.has(name)) offending.push(`${file}:${imp.line} ${imp.name}`);
        if (imp.name.startsWith('.') && !own.has(name))
          offending.push(`${file}:${imp.line} ${imp.name} (no such module)`);
      }
    }
    expect(offending).toEqual([]);
  });

  it("blender/ scripts import their own folder's modules, the remaps, and the add-on only where named", async () => {
    const farmFiles = await pythonFiles('blender');
    const folderOf = new Map(farmFiles.map((f) => [stem(f), path.posix.dirname(f)]));
    const addon = new Set([...(await pythonFiles(ADDON)).map(stem), 'renderbridge']);
    const offending: string[] = [];
    for (const file of farmFiles) {
      const dir = path.posix.dirname(file);
      for (const imp of pythonImports(await readFile(path.join(root, file), 'utf8'))) {
        const tie = ADDON_TIES.some((t) => t.file === file && t.name === imp.name);
        const home = folderOf.get(imp.name);
        if (home !== undefined) {
          if (home !== dir && !(home === 'blender/remap' && REMAP_USERS.includes(dir)))
            offending.push(`${file}:${imp.line} ${imp.name} (from ${home})`);
        } else if (addon.has(imp.name) && !tie) offending.push(`${file}:${imp.line} ${imp.name} (the add-on)`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('the named ties to the add-on are still there (else drop them from the rule)', async () => {
    for (const t of ADDON_TIES) {
      const names = pythonImports(await readFile(path.join(root, t.file), 'utf8')).map((i) => i.name);
      expect(names, t.file).toContain(t.name);
    }
  });

  it("the add-on's modules import one another without a circle", async () => {
    const files = await pythonFiles(ADDON);
    const own = new Set(files.map(stem));
    const edges = new Map<string, Set<string>>();
    for (const file of files) {
      const targets = pythonImports(await readFile(path.join(root, file), 'utf8'))
        .map((i) => i.name.replace(/^\./, ''))
        .filter((n) => own.has(n) && n !== '__init__');
      edges.set(stem(file), new Set(targets));
    }
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (mod: string, trail: string[]) => {
      if (state.get(mod) === 'done') return;
      if (state.get(mod) === 'open') return void circles.push([...trail.slice(trail.indexOf(mod)), mod].join(' -> '));
      state.set(mod, 'open');
      for (const next of edges.get(mod) ?? []) visit(next, [...trail, mod]);
      state.set(mod, 'done');
    };
    for (const mod of edges.keys()) visit(mod, []);
    expect(circles).toEqual([]);
  });

  it('finds the imports it checks (the scan itself works)', () => {
    const seen = pythonImports(
      'from . import a, b\nfrom .c import d\n    import e.f as g\nfrom h import (i,\nimport bpy, os  # x\n',
    );
    expect(seen.map((s) => s.name)).toEqual(['.a', '.b', '.c', 'e', 'h', 'bpy', 'os']);
  });
});
