// Where a contract's Python script lies: beside the TypeScript module that runs it, in the same
// folder of blender/. scripts/copy-python.mjs copies every blender/**/*.py to the same place under
// dist/, so this holds from the sources (tsx, vitest) and from dist/ alike; a dist/ built without
// that copy falls back to the source tree.
import { existsSync } from 'node:fs';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The absolute path of `name` beside the module at `moduleUrl` (its `import.meta.url`). */
export function scriptBeside(moduleUrl: string, name: string): string {
  const beside = fileURLToPath(new URL(`./${name}`, moduleUrl));
  if (existsSync(beside)) return beside;
  const inSources = beside.replace(`${sep}dist${sep}blender${sep}`, `${sep}blender${sep}`);
  return existsSync(inSources) ? inSources : beside;
}
