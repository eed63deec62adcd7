// A project on disk for the blob upload tests: a compressible .blend, incompressible textures
// (one of them twice, under two names), an empty file, each with its sha256 as the packer
// would give it. Not a *.test.ts file, so vitest does not collect it.
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProjectFile } from '../../../shared/client/blob-upload.js';

export const MiB = 1024 * 1024;

/** Sizes of the textures: several parts each at the 1 MiB part size the tests run the service with. */
export const TEXTURE_BYTES = 3 * MiB + 12_345;

/** A .blend-like file that gzip shrinks, like a real uncompressed .blend. */
function blendBytes(): Buffer {
  const lines: string[] = [];
  for (let i = 0, length = 0; length < 1.5 * MiB; i++) {
    const line = `OB${i} mesh.${i % 97} location ${i * 0.5} ${i % 13}\n`;
    lines.push(line);
    length += line.length;
  }
  return Buffer.concat([Buffer.from('BLENDER-v304'), Buffer.from(lines.join(''))]);
}

export interface BlobProject {
  dir: string;
  files: ProjectFile[];
  /** Raw bytes of the distinct blobs: what a first upload has to send. */
  uniqueBytes: number;
  /** Writes new random bytes into a texture and hashes it again; answers the new file list. */
  change(name: string): Promise<ProjectFile[]>;
}

async function fileOf(dir: string, name: string, compression: ProjectFile['compression']): Promise<ProjectFile> {
  const source = path.join(dir, name);
  const bytes = await readFile(source);
  return {
    path: `project/${name}`,
    source,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    size: bytes.length,
    compression,
  };
}

export async function writeBlobProject(dir: string): Promise<BlobProject> {
  const tex = randomBytes(TEXTURE_BYTES);
  await writeFile(path.join(dir, 'scene.blend'), blendBytes());
  await writeFile(path.join(dir, 'wood.png'), tex);
  // The same bytes under another name: one blob, sent once.
  await writeFile(path.join(dir, 'wood-copy.png'), tex);
  await writeFile(path.join(dir, 'metal.exr'), randomBytes(TEXTURE_BYTES));
  await writeFile(path.join(dir, 'stone.jpg'), randomBytes(TEXTURE_BYTES));
  await writeFile(path.join(dir, 'empty.txt'), Buffer.alloc(0));
  const names: [string, ProjectFile['compression']][] = [
    ['scene.blend', 'gzip'],
    ['wood.png', 'none'],
    ['wood-copy.png', 'none'],
    ['metal.exr', 'none'],
    ['stone.jpg', 'none'],
    ['empty.txt', 'none'],
  ];
  const files = await Promise.all(names.map(([n, c]) => fileOf(dir, n, c)));
  const unique = new Map(files.map((f) => [`${f.sha256}-${f.size}`, f.size]));
  return {
    dir,
    files,
    uniqueBytes: [...unique.values()].reduce((a, b) => a + b, 0),
    async change(name) {
      await writeFile(path.join(dir, name), randomBytes(TEXTURE_BYTES));
      const changed = await fileOf(dir, name, 'none');
      return files.map((f) => (f.source === changed.source ? changed : f));
    },
  };
}
