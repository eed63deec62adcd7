// The worker's Blender scripts travel with the compiled JavaScript (dist/ is what `bin` runs).
import { cpSync } from 'node:fs';

cpSync('service/worker/python', 'dist/service/worker/python', {
  recursive: true,
  filter: (src) => !src.includes('__pycache__') && !src.endsWith('.pyc'),
});
