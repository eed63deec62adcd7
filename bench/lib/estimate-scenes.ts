// The scenes of bench:estimate (built by estimate_scenes.py in Blender, cached under the OS temp
// folder by a hash of the builder) and the render request each is estimated and rendered with.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { RenderRequest } from './render-jobs.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, 'estimate_scenes.py');
/** The fixtures' helpers the builder imports: a change there is a new scene too. */
const COMMON = path.join(HERE, '..', '..', 'test', 'fixtures', 'blend', '_common.py');

export interface EstimateScene {
  name: string;
  /** What makes its timeline uneven, in words for the results. */
  what: string;
  frames: number;
  width: number;
  height: number;
  samples: number;
}

/**
 * Sizes chosen so that the whole bench takes about 15 minutes on this 2-core machine, every job of
 * 100 frames or more (the estimate's cost target is for those), frames of a few tenths of a second
 * warm (at 64x48 and 8 samples the particles' frames took 0.07 s warm, and the job was its fixed
 * costs). EEVEE is slow here (no GPU: Mesa's software OpenGL, 2-6 s a frame, seconds of shader
 * compilation per Blender), so it gets 100 frames at the smallest size.
 */
export const SCENES: readonly EstimateScene[] = [
  {
    name: 'flythrough',
    what: 'camera flies from an empty sky into a cluster of glass monkeys (16 bounces)',
    frames: 120,
    width: 64,
    height: 48,
    samples: 12,
  },
  {
    name: 'subdivision',
    what: 'Subdivision levels keyframed 0 to 5 on a Suzanne, the top held over the last fifth',
    frames: 150,
    width: 96,
    height: 72,
    samples: 32,
  },
  {
    name: 'particles',
    what: 'baked particle cache, 3,000 icosphere instances born over the first five sixths',
    frames: 150,
    width: 96,
    height: 72,
    samples: 64,
  },
  {
    name: 'textures',
    what: 'eight 1024x1024 generated images (two float) sliding into view',
    frames: 150,
    width: 128,
    height: 96,
    samples: 32,
  },
  {
    name: 'eevee',
    what: 'EEVEE (software OpenGL), soft shadows, bloom, subdivision 1 to 4 (held over the last fifth)',
    frames: 100,
    width: 64,
    height: 48,
    samples: 4,
  },
  {
    name: 'template',
    what: "Blender's Sculpting template (startup.blend as shipped) in Cycles, camera dollying in",
    frames: 150,
    width: 96,
    height: 72,
    samples: 64,
  },
];

export const requestOf = (s: EstimateScene): RenderRequest => ({
  colorManagementPreset: 'default',
  frameRanges: [`1-${s.frames}`],
  resolution: [s.width, s.height],
  sampleCount: s.samples,
});

/** The scene's .blend, built by Blender once per version of the builder script. */
export async function buildScene(s: Pick<EstimateScene, 'name' | 'frames'>): Promise<string> {
  const { name } = s;
  const hash = createHash('sha256')
    .update(readFileSync(SCRIPT))
    .update(readFileSync(COMMON))
    .update(`${name}:${s.frames}`)
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(os.tmpdir(), `rb-bench-estimate-${hash}`);
  const target = path.join(dir, `${name}.blend`);
  if (existsSync(target)) return target;
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `${name}.${process.pid}.tmp.blend`);
  try {
    await run(
      'blender',
      ['-b', '--factory-startup', '-noaudio', '--python', SCRIPT, '--', tmp, name, String(s.frames)],
      {
        cwd: dir,
        maxBuffer: 64 * 1024 * 1024,
        timeout: 300_000,
      },
    );
  } catch (err) {
    await rm(tmp, { force: true });
    throw new Error(`building the ${name} scene failed: ${(err as Error).message.split('\n').slice(-5).join('\n')}`, {
      cause: err,
    });
  }
  if (!existsSync(tmp)) throw new Error(`building the ${name} scene wrote no file`);
  await rename(tmp, target);
  return target;
}
