// Python that runs inside Blender travels with the compiled JavaScript (dist/ is what `bin` runs):
// the worker's scripts, and the add-on whose dependency collector the daemon runs headless.
import { cpSync, existsSync } from 'node:fs';

const skip = (src) => !src.includes('__pycache__') && !src.endsWith('.pyc');
for (const [from, to] of [
  ['service/worker/python', 'dist/service/worker/python'],
  ['daemon/python', 'dist/daemon/python'],
  ['daemon/ui', 'dist/daemon/ui'],
  ['host-addon', 'dist/host-addon'],
]) {
  if (existsSync(from)) cpSync(from, to, { recursive: true, filter: skip });
}
