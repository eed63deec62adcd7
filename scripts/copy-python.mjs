// Python that runs inside Blender and the pages served to browsers (the daemon's job window, the
// service's dashboard) travel with the compiled JavaScript (dist/ is what `bin` runs):
// every blender/**/*.py to the same place under dist/, beside the module that runs it (see
// blender/script-path.ts), and the add-on whose dependency collector blender/trace runs headless.
import { cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

const skip = (src) => !src.includes('__pycache__') && !src.endsWith('.pyc');
for (const [from, to] of [
  ['daemon/ui', 'dist/daemon/ui'],
  ['service/dashboard/public', 'dist/service/dashboard/public'],
  ['host-addon', 'dist/host-addon'],
]) {
  if (existsSync(from)) cpSync(from, to, { recursive: true, filter: skip });
}
for (const entry of readdirSync('blender', { recursive: true, withFileTypes: true })) {
  const rel = path.relative('.', path.join(entry.parentPath, entry.name));
  if (!entry.isFile() || !entry.name.endsWith('.py') || !skip(rel)) continue;
  mkdirSync(path.join('dist', path.dirname(rel)), { recursive: true });
  cpSync(rel, path.join('dist', rel));
}
