// The folder a test render writes into, laid out as a worker's attempt: frames/ for the camera's files,
// composite/ for the File Output nodes', and settings.json beside them. Shared by render-runs.ts and
// warm-process.test.ts.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface RenderDirs {
  dir: string;
  frames: string;
  composite: string;
  settingsFile: string;
}

/** Makes `dir` with frames/ and composite/ in it; the settings file is the caller's to write. */
export async function makeRenderDirs(dir: string): Promise<RenderDirs> {
  const d = {
    dir,
    frames: join(dir, 'frames'),
    composite: join(dir, 'composite'),
    settingsFile: join(dir, 'settings.json'),
  };
  await mkdir(d.frames, { recursive: true });
  await mkdir(d.composite, { recursive: true });
  return d;
}
