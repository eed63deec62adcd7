// The project of `npm run bench:resubmit`: scene.blend (built by resubmit_scene.py in real
// Blender) whose material uses N textures, textures/tex_NN.png, each of random (incompressible)
// bytes. "Changing a texture" rewrites one file with new random bytes of the same size.
import { randomFillSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBlender } from '../../blender/run.js';

const BUILDER = fileURLToPath(new URL('./resubmit_scene.py', import.meta.url));

export interface Project {
  root: string;
  blend: string;
  textures: string[];
  textureBytes: number;
  /** Bytes of every file of the project (the .blend and the textures). */
  totalBytes: number;
}

/** Writes `size` random bytes to `file`, replacing it atomically (a rename, as an image editor saving would). */
export async function writeRandomFile(file: string, size: number): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, 'w');
  const buf = Buffer.alloc(Math.min(size, 8 * 1024 * 1024));
  try {
    for (let done = 0; done < size;) {
      const chunk = buf.subarray(0, Math.min(buf.length, size - done));
      randomFillSync(chunk);
      await fh.write(chunk);
      done += chunk.length;
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
}

/** Builds the project in `root`: the textures first, then the .blend (about 2 s of Blender). */
export async function buildProject(
  root: string,
  opts: { textures: number; textureBytes: number; blender?: string },
): Promise<Project> {
  await mkdir(path.join(root, 'textures'), { recursive: true });
  const textures: string[] = [];
  for (let i = 1; i <= opts.textures; i++) {
    const file = path.join(root, 'textures', `tex_${String(i).padStart(2, '0')}.png`);
    await writeRandomFile(file, opts.textureBytes);
    textures.push(file);
  }
  const blend = path.join(root, 'scene.blend');
  const res = await runBlender({
    binary: opts.blender ?? process.env.RENDERBRIDGE_BLENDER ?? 'blender',
    pythonScript: BUILDER,
    scriptArgs: [blend, String(opts.textures)],
    timeoutMs: 120_000,
  });
  if (res.exitCode !== 0 || !existsSync(blend))
    throw new Error(`building ${blend} failed (exit ${res.exitCode}):\n${res.lastLines.join('\n')}`);
  const totalBytes = (await stat(blend)).size + opts.textures * opts.textureBytes;
  return { root, blend, textures, textureBytes: opts.textureBytes, totalBytes };
}
