// bench:render's sandbox scenario: the same service (the bench's child, one slot, logging off)
// with Blender in the bubblewrap sandbox and with --no-sandbox, rendering the same scene in
// alternating rounds. The sandbox adds a namespace setup per Blender start and bind mounts on its
// file paths; the target says that costs at most 1% of a job.
import { startRenderService, timedRender, validatedJob, type RenderService } from './render-jobs.js';
import { median, verdict, type Row } from './results.js';
import { s2, type Outcome, type Scene } from './render-scenario-kit.js';

export async function sandboxOverhead(name: string, s: Scene, rounds: number, target: number): Promise<Outcome> {
  const build = s.build ? { blenderPaths: [s.build], blenderFromPath: false } : {};
  const request = {
    colorManagementPreset: 'default' as const,
    frameRanges: [`1-${s.frames}`],
    resolution: [s.width, s.height] as [number, number],
    sampleCount: s.samples,
  };
  const services: Record<'sandbox' | 'no sandbox', RenderService | undefined> = {
    sandbox: undefined,
    'no sandbox': undefined,
  };
  const rows: Row[] = [];
  const times: Record<'sandbox' | 'no sandbox', number[]> = { sandbox: [], 'no sandbox': [] };
  const ratios: number[] = [];
  try {
    services.sandbox = await startRenderService({ slots: 1, config: { ...build, sandbox: true } });
    services['no sandbox'] = await startRenderService({ slots: 1, config: { ...build, sandbox: false } });
    // Warm-up of each: page cache, the first Blender start, the service's JIT.
    for (const svc of Object.values(services)) {
      await timedRender(
        svc!.client,
        await validatedJob(svc!.client, s.file),
        { ...request, frameRanges: [`1-${Math.min(s.frames, 12)}`] },
        Math.min(s.frames, 12),
      );
    }
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 ? (['sandbox', 'no sandbox'] as const) : (['no sandbox', 'sandbox'] as const);
      for (const which of order) {
        const svc = services[which]!;
        const id = await validatedJob(svc.client, s.file);
        const r = await timedRender(svc.client, id, request, s.frames);
        times[which].push(r.seconds);
        rows.push({
          scene: name,
          round: String(round),
          run: which,
          'wall s': s2(r.seconds),
          'to first frame s': s2(r.firstFrame),
        });
        console.log(rows.at(-1));
      }
      ratios.push(times.sandbox.at(-1)! / times['no sandbox'].at(-1)!);
      rows.at(-1)!['round ratio'] = `${ratios.at(-1)!.toFixed(3)}x`;
    }
  } finally {
    await Promise.all(Object.values(services).map((svc) => svc?.stop()));
  }
  const ratio = median(ratios);
  return {
    rows,
    pass: ratio <= target,
    verdicts: [
      {
        scene: name,
        'no sandbox s': s2(median(times['no sandbox'])),
        'sandbox s': s2(median(times.sandbox)),
        'sandbox / no sandbox': `${ratio.toFixed(3)}x`,
        target: `<= ${target}x`,
        verdict: verdict(ratio <= target),
        'ratio of medians': `${(median(times.sandbox) / median(times['no sandbox'])).toFixed(3)}x`,
      },
    ],
  };
}
