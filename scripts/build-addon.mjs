// `npm run build:addon`: writes dist/renderbridge-addon.zip, the installable Blender add-on.
// Layout: every file of host-addon/renderbridge/ under `renderbridge/` at the zip root. Blender 3.4-4.1
// install it as a legacy add-on (Preferences > Add-ons > Install, bl_info in __init__.py); Blender
// 4.2+ installs the same zip as an extension (Install from Disk): its blender_manifest.toml may sit
// inside one top-level folder of the archive. Caches (__pycache__, .pyc) are left out.
import { createWriteStream } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { ZipArchive } from 'archiver';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(root, 'host-addon', 'renderbridge');
const out = path.resolve(process.argv[2] ?? path.join(root, 'dist', 'renderbridge-addon.zip'));

async function filesOf(dir) {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && !e.name.endsWith('.pyc') && !e.name.startsWith('.'))
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((rel) => !rel.split(path.sep).includes('__pycache__'))
    .sort();
}

const files = await filesOf(source);
if (!files.includes('__init__.py') || !files.includes('blender_manifest.toml')) {
  throw new Error(`${source} must hold __init__.py and blender_manifest.toml`);
}
await mkdir(path.dirname(out), { recursive: true });
const zip = new ZipArchive({ zlib: { level: 9 } });
for (const rel of files)
  zip.file(path.join(source, rel), { name: `renderbridge/${rel.split(path.sep).join('/')}`, date: new Date(0) });
const done = pipeline(zip, createWriteStream(out));
await zip.finalize();
await done;
process.stdout.write(`wrote ${path.relative(process.cwd(), out) || out} (${files.length} files)\n`);
