// The scenarios of bench:render that compare the service with bare Blender on one slot: the small
// job, the subdivision and heavy-load scenes (warm service vs bare, in alternating rounds), and the
// subdivision scene through today's chunked mode and as one process per frame.
import { rm } from 'node:fs/promises';
import { bareProcessPerFrame, settingsExpr } from './render-bare.js';
import {
  childrenGone,
  cpuSeconds,
  timedRender,
  validatedJob,
  type RenderService,
  type RenderServiceOptions,
} from './render-jobs.js';
import { median, verdict, type Row } from './results.js';
import { bare, request, s2, scratch, withService, type Outcome, type Scene } from './render-scenario-kit.js';

/**
 * Bare and warm service, `rounds` times alternating which goes first, after one warm-up job. The
 * verdict is the median of the rounds' ratios: the two runs of a round are back to back, so the
 * slow drift of this shared machine's speed (10-20% within minutes) cancels in each ratio, which
 * it does not between medians of runs minutes apart (shown too). CPU seconds: Blender's (the
 * bare process; the service's reaped Blenders) and the service process's own bookkeeping.
 */
export async function serviceVsBare(
  name: string,
  s: Scene,
  rounds: number,
  target: number,
  extraRuns?: (svc: RenderService) => Promise<Row[]>,
  /** How the service starts. Default: the bench's child (logging off, one slot, the scene's build). */
  start?: () => Promise<RenderService>,
): Promise<Outcome & { bare: number; service: number }> {
  const rows: Row[] = [];
  const bareS: number[] = [];
  const svcS: number[] = [];
  const ratios: number[] = [];
  const firsts: number[] = [];
  const cpu = { bareBlender: [] as number[], svcBlender: [] as number[], svcOwn: [] as number[] };
  const own: RenderServiceOptions = {
    slots: 1,
    ...(s.build ? { config: { blenderPaths: [s.build], blenderFromPath: false } } : {}),
  };
  await withService(start ?? own, async (svc) => {
    // Warm-up: page cache, Blender's first start, the service's JIT.
    await timedRender(
      svc.client,
      await validatedJob(svc.client, s.file),
      { ...request(s), frameRanges: [`1-${Math.min(s.frames, 12)}`] },
      Math.min(s.frames, 12),
    );
    for (let round = 1; round <= rounds; round++) {
      for (const which of round % 2 ? (['bare', 'service'] as const) : (['service', 'bare'] as const)) {
        if (which === 'bare') {
          const c0 = cpuSeconds('self').children;
          const b = await bare(s);
          const blender = cpuSeconds('self').children - c0;
          bareS.push(b.seconds);
          cpu.bareBlender.push(blender);
          rows.push({
            scene: name,
            round: String(round),
            run: 'bare blender -a',
            'wall s': s2(b.seconds),
            'Blender CPU s': s2(blender),
          });
        } else {
          const id = await validatedJob(svc.client, s.file);
          const c0 = cpuSeconds(svc.pid);
          const r = await timedRender(svc.client, id, request(s), s.frames);
          await childrenGone(svc.pid);
          const c1 = cpuSeconds(svc.pid);
          svcS.push(r.seconds);
          firsts.push(r.firstFrame);
          cpu.svcBlender.push(c1.children - c0.children);
          cpu.svcOwn.push(c1.own - c0.own);
          rows.push({
            scene: name,
            round: String(round),
            run: start ? 'renderbridge service' : 'service (warm)',
            'wall s': s2(r.seconds),
            'to first frame s': s2(r.firstFrame),
            'Blender CPU s': s2(c1.children - c0.children),
            'service CPU s': s2(c1.own - c0.own),
          });
        }
        console.log(rows.at(-1));
      }
      ratios.push(svcS.at(-1)! / bareS.at(-1)!);
      rows.at(-1)!['round ratio'] = `${ratios.at(-1)!.toFixed(3)}x`;
    }
  });
  if (extraRuns) await withService({ slots: 1 }, async (svc) => rows.push(...(await extraRuns(svc))));
  const ratio = median(ratios);
  return {
    rows,
    bare: median(bareS),
    service: median(svcS),
    verdicts: [
      {
        scene: name,
        'bare s': s2(median(bareS)),
        'service s': s2(median(svcS)),
        'service / bare': `${ratio.toFixed(3)}x`,
        target: `<= ${target}x`,
        verdict: verdict(ratio <= target),
        'ratio of medians': `${(median(svcS) / median(bareS)).toFixed(3)}x`,
        'first frame s': s2(median(firsts)),
        'Blender CPU s, bare / service': `${s2(median(cpu.bareBlender))} / ${s2(median(cpu.svcBlender))}`,
        'service CPU s': s2(median(cpu.svcOwn)),
      },
    ],
    pass: ratio <= target,
  };
}

/** The subdivision scene through today's chunked mode, and as one bare process per frame (a sample, scaled). */
export async function otherModes(s: Scene, perFrameSample: number): Promise<Row[]> {
  const rows: Row[] = [];
  await withService({ slots: 1, config: { renderMode: 'chunked' } }, async (svc) => {
    const r = await timedRender(svc.client, await validatedJob(svc.client, s.file), request(s), s.frames);
    rows.push({
      scene: 'subdivision',
      round: '1',
      run: 'service, chunked mode (before)',
      'wall s': s2(r.seconds),
      'to first frame s': s2(r.firstFrame),
    });
  });
  const every = Math.max(1, Math.round(s.frames / perFrameSample));
  const sample = Array.from({ length: Math.ceil(s.frames / every) }, (_, i) => 1 + i * every);
  const outDir = scratch();
  const t = await bareProcessPerFrame(
    { file: s.file, outDir, expr: settingsExpr(s.width, s.height, s.samples) },
    sample,
  );
  await rm(outDir, { recursive: true, force: true });
  rows.push({
    scene: 'subdivision',
    round: '1',
    run:
      `bare, one process per frame (${sample.length} of ${s.frames} frames timed, ` +
      `x ${(s.frames / sample.length).toFixed(1)})`,
    'wall s': s2((t * s.frames) / sample.length),
  });
  return rows;
}
