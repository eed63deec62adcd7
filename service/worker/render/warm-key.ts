// The key a slot's warm Blender is kept under in the WarmPool: one job, one Blender build, and the
// render settings it loaded the scene with. An estimate's Blender (estimate-render.ts) is kept under
// the key of the render of the same request, so that the render's first frames take it over
// instead of loading the scene again; a render asked with other settings gets another key, and so
// a Blender of its own.
import { createHash } from 'node:crypto';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import type { RequestedConfig } from '../../../shared/api/render-config.js';
import { renderSettingsFrom } from '../../../blender/render/render-settings.js';

/** What the key is made of: the run's job and the settings its Blender is set up with. */
export interface WarmKeyRun {
  jobId: string;
  final: FinalConfig;
  requested: RequestedConfig;
}

/**
 * What Blender is set up with, folders aside (each process has its own): render_setup.py's settings
 * and the scene file. Frame ranges are not in it: each render call names its frames.
 */
export function settingsFingerprint(run: Pick<WarmKeyRun, 'final' | 'requested'>): string {
  let settings: unknown;
  try {
    settings = renderSettingsFrom(run.final, { compositeDir: '/', requested: run.requested, allowCpuFallback: true });
  } catch {
    // Settings no Blender could be set up with never match another run's: the whole config is the key.
    settings = { final: run.final, requested: run.requested };
  }
  const scene = { file: run.final.pathToFileForRender ?? null, scene: run.final.sceneToRender ?? null };
  return createHash('sha256').update(JSON.stringify({ settings, scene })).digest('hex').slice(0, 16);
}

/** Fingerprints by run: a render asks for its key at each run of frames. */
const fingerprints = new WeakMap<WarmKeyRun, string>();

/** A slot's warm process serves one job with one Blender build and one set of render settings. */
export function warmKey(run: WarmKeyRun, binary: string): string {
  let print = fingerprints.get(run);
  if (print === undefined) fingerprints.set(run, (print = settingsFingerprint(run)));
  return `${run.jobId}\n${binary}\n${print}`;
}
