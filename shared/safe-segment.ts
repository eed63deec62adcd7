// One path segment made safe for object keys and folder names. Names come from the scene (any
// characters): the worker's output keys use it, and so do the folders render setup gives File
// Output nodes (blender/render/render-settings.ts; render_setup_outputs.py has the same rule in
// Python for nested nodes), so both sides agree on every name.
import path from 'node:path';

const MAX_SEGMENT = 200;

/** Safe characters only, starting with a letter or digit, bounded length (the extension kept). */
export function safeSegment(name: string): string {
  let s = name
    .normalize('NFC')
    .replace(/[^A-Za-z0-9._ -]/g, '_')
    .trim();
  if (!/^[A-Za-z0-9]/.test(s)) s = `f${s}`;
  if (s.length > MAX_SEGMENT) {
    const ext = path.posix.extname(s).slice(0, 16);
    s = s.slice(0, MAX_SEGMENT - ext.length) + ext;
  }
  return s;
}
