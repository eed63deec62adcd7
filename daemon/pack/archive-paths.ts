// Archive paths of a pack: the place of a file inside the project root or mirrored below
// `_external/` (the rules in layout.ts's header), the root itself, and what makes a path unfit
// for an archive. Pure, on either path flavour (posix or win32).
import path from 'node:path';
import type { CollectedDependency } from '../../shared/pack/dependencies.js';
import { EXTERNAL_DIR, isArchivePath } from '../../shared/pack/manifest.js';

export type PathApi = typeof path.posix;

/** What the worker accepts (service/worker/unpack-rules.ts): one name component, a whole path. */
const MAX_SEGMENT_BYTES = 255;
const MAX_PATH_BYTES = 4000;
/**
 * The file's absolute path as a mirror below `_external/`, without that prefix:
 * `/mnt/a.png` -> `mnt/a.png`, `C:\x\y` -> `C/x/y`, `\\server\share\x` -> `UNC/server/share/x`.
 */
export function mirrorPath(abs: string, api: PathApi = path): string {
  if (api.sep === '/') return api.normalize(abs).replace(/^\/+/, '');
  let p = api.normalize(abs.replace(/\//g, '\\'));
  p = p.replace(/^\\\\[?.]\\UNC\\/i, '\\\\').replace(/^\\\\[?.]\\(?=[a-z]:)/i, '');
  if (p.startsWith('\\\\')) return `UNC/${p.slice(2).split('\\').filter(Boolean).join('/')}`;
  const drive = /^([a-z]):\\?/i.exec(p);
  const rest = drive ? p.slice(drive[0].length) : p.replace(/^\\+/, '');
  return [drive ? (drive[1] as string).toUpperCase() : '', ...rest.split('\\')].filter(Boolean).join('/');
}

/** True when `child` is `dir` or inside it. */
function inside(dir: string, child: string, api: PathApi): boolean {
  const rel = api.relative(dir, child);
  return !api.isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${api.sep}`);
}

/** Deepest common folder of the main .blend's folder and the targets of its own `//` dependencies. */
export function projectRoot(mainBlend: string, deps: readonly CollectedDependency[], api: PathApi = path): string {
  const main = api.normalize(mainBlend);
  let root = api.dirname(main);
  for (const d of deps) {
    if (!d.path.startsWith('//') || !sameFile(d.blendFile, main, api)) continue;
    const abs = api.normalize(d.absolute);
    const folder = d.pattern === 'directory' ? abs : api.dirname(abs);
    // A `//` path cannot lead to another drive; such a target is placed as external.
    if (api.parse(folder).root.toLowerCase() !== api.parse(root).root.toLowerCase()) continue;
    while (!inside(root, folder, api) && api.dirname(root) !== root) root = api.dirname(root);
  }
  return root;
}

function sameFile(a: string, b: string, api: PathApi): boolean {
  const [x, y] = [api.normalize(a), api.normalize(b)];
  return api.sep === '\\' ? x.toLowerCase() === y.toLowerCase() : x === y;
}

/** Archive place of an absolute path (file or folder); '' for the root itself. */
export function placePath(abs: string, root: string, api: PathApi = path): string {
  const p = api.normalize(abs);
  if (inside(root, p, api)) return api.relative(root, p).split(api.sep).filter(Boolean).join('/');
  return `${EXTERNAL_DIR}/${mirrorPath(p, api)}`;
}

/** Why `p` cannot be an archive path, or null when it can. */
export function archivePathProblem(p: string): string | null {
  if (!isArchivePath(p)) return 'it contains a backslash, a control character or an empty, "." or ".." part';
  if (/^\w+:/.test(p)) return 'it starts with "name:", which zip tools read as a drive and strip';
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) return `the path is longer than ${MAX_PATH_BYTES} bytes`;
  if (p.split('/').some((s) => Buffer.byteLength(s) > MAX_SEGMENT_BYTES))
    return `a name is longer than ${MAX_SEGMENT_BYTES} bytes`;
  return null;
}
