// What the scenarios of bench:render share: the scene and outcome shapes, the request that renders
// a scene, a bare Blender run of it in a scratch folder, a service started and stopped around a
// run, and the stepper that runs a scenario and prints its tables.
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bareAnimation, settingsExpr, type BareOptions } from './render-bare.js';
import {
  startRenderService,
  type RenderRequest,
  type RenderService,
  type RenderServiceOptions,
} from './render-jobs.js';
import { otherLoadMeter } from './machine.js';
import { consoleTable, type Row } from './results.js';

export interface Scene {
  file: string;
  frames: number;
  width: number;
  height: number;
  samples: number;
  /** The Blender build (executable, release folder or root) of both runs. Default PATH's `blender`. */
  build?: string;
}

export interface Outcome {
  rows: Row[];
  verdicts: Row[];
  pass: boolean;
}

export const request = (s: Scene): RenderRequest => ({
  colorManagementPreset: 'default',
  frameRanges: [`1-${s.frames}`],
  resolution: [s.width, s.height],
  sampleCount: s.samples,
});
export const scratch = (tag = '') => path.join(os.tmpdir(), `rb-bench-bare-${process.pid}${tag}`);
export const s2 = (n: number) => n.toFixed(2);

export async function bare(s: Scene, extra: Partial<BareOptions> = {}, first = 1) {
  const outDir = scratch(`-${first}-${extra.cpus ?? 'all'}`);
  await rm(outDir, { recursive: true, force: true });
  try {
    return await bareAnimation(
      {
        file: s.file,
        outDir,
        expr: settingsExpr(s.width, s.height, s.samples),
        ...(s.build ? { build: s.build } : {}),
        ...extra,
      },
      first,
      s.frames,
    );
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

export async function withService<T>(
  o: RenderServiceOptions | (() => Promise<RenderService>),
  fn: (svc: RenderService) => Promise<T>,
): Promise<T> {
  const svc = typeof o === 'function' ? await o() : await startRenderService(o);
  try {
    return await fn(svc);
  } finally {
    await svc.stop();
  }
}

/**
 * Runs one scenario of bench:render: prints its tables and adds it to `outcomes`, with the CPU other
 * programs took during it (this machine is shared) beside its first verdict.
 */
export function stepper(outcomes: Outcome[]): (name: string, run: () => Promise<Outcome>) => Promise<void> {
  return async (name, run) => {
    console.log(`\n== ${name}`);
    const during = otherLoadMeter();
    const o = await run();
    const load = during();
    const note = `${(load.others + load.steal).toFixed(2)} cores`;
    const marked = { ...o, verdicts: o.verdicts.map((v, i) => (i === 0 ? { ...v, 'other load': note } : v)) };
    console.log(consoleTable(marked.rows));
    console.log(consoleTable(marked.verdicts));
    outcomes.push(marked);
  };
}
