// A project on disk for the blob upload tests: a compressible .blend, incompressible textures
// (one of them twice, under two names), an empty file, each with its sha256 as the packer
// would give it. Not a *.test.ts file, so vitest does not collect it.
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterEach, beforeEach } from 'vitest';
import { RenderJobClient } from '../../../shared/client/client.js';
import type { ProxiedService } from '../../helpers/proxied-service.js';
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

/** What each blob upload test works on: a fresh project (and the service it starts), all gone after it. */
export interface BlobTest {
  dir: string;
  project: BlobProject;
  env: ProxiedService | undefined;
}

/** Registers the hooks that give each test of the file a fresh project under a folder named `prefix...`. */
export function blobProjectPerTest(prefix: string): BlobTest {
  const t: BlobTest = { dir: '', project: undefined as unknown as BlobProject, env: undefined };
  beforeEach(async () => {
    t.dir = await mkdtemp(path.join(tmpdir(), prefix));
    t.project = await writeBlobProject(t.dir);
  });
  afterEach(async () => {
    await t.env?.close();
    t.env = undefined;
    await rm(t.dir, { recursive: true, force: true });
  });
  return t;
}

/** A client of the proxied service; short back-off, as the tests are about what is sent again, not the wait. */
export function clientOf(e: ProxiedService): RenderJobClient {
  return new RenderJobClient({ baseUrl: e.baseUrl, apiKey: e.svc.apiKey, baseDelayMs: 50, maxDelayMs: 200 });
}
