// The scenarios of bench:render, each run against its baseline in the same run: the small job,
// the subdivision scene (warm vs bare, today's chunked mode, one process per frame), the
// heavy-load scene on one slot, two single-threaded workers sharing the heavy scene, and a warm
// Blender killed mid-job. Each returns its table rows and verdicts.
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { bareAnimation, bareProcessPerFrame, mean, settingsExpr, type BareOptions } from './render-bare.js';
import {
  childrenGone,
  cpuSeconds,
  startRenderService,
  timedRender,
  validatedJob,
  type RenderRequest,
  type RenderService,
  type RenderServiceOptions,
} from './render-jobs.js';
import { otherLoadMeter } from './machine.js';
import { consoleTable, median, verdict, type Row } from './results.js';

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

const request = (s: Scene): RenderRequest => ({
  colorManagementPreset: 'default',
  frameRanges: [`1-${s.frames}`],
  resolution: [s.width, s.height],
  sampleCount: s.samples,
});
const scratch = (tag = '') => path.join(os.tmpdir(), `rb-bench-bare-${process.pid}${tag}`);
const s2 = (n: number) => n.toFixed(2);

async function bare(s: Scene, extra: Partial<BareOptions> = {}, first = 1) {
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

async function withService<T>(
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

/** Two worker processes, one single-threaded slot each, pinned to a core each, sharing the heavy scene. */
export async function twoWorkers(s: Scene, target: number): Promise<Outcome> {
  // The reference: one load and the frames' time, single-threaded, from two short bare runs at once,
  // one pinned to each core as the workers are (one alone on the machine renders faster than two
  // side by side: they share caches and memory bandwidth). Their frames interleave over the whole
  // shot (every tenth between them): this scene's frames cost more in the middle of the camera move
  // than at its start, so the first frames alone would flatter the ideal.
  const k = 12;
  const step = Math.max(1, Math.floor(s.frames / k));
  const refs = await Promise.all([
    bare(s, { threads: 1, cpus: '0', step: 2 * step }, 1),
    bare(s, { threads: 1, cpus: '1', step: 2 * step }, 1 + step),
  ]);
  const frameS = mean(refs.flatMap((r) => r.frameSeconds));
  const load = mean(
    refs.map((r) => r.seconds - Math.ceil((s.frames - (r === refs[0] ? 0 : step)) / (2 * step)) * frameS),
  );
  const ref = { seconds: Math.max(...refs.map((r) => r.seconds)) };
  const ideal = load + (s.frames * frameS) / 2;
  const workers = [{ cpus: '0' }, { cpus: '1' }];
  const { seconds, spread, counts } = await withService(
    { slots: 0, workers, tuning: { runtime: { workerName: 'w' } } },
    async (svc) => {
      const id = await validatedJob(svc.client, s.file);
      const r = await timedRender(svc.client, id, request(s), s.frames);
      const tasks = await jobTasks(svc, id);
      const lastEnd = new Map<string, number>();
      const frames = new Map<string, number>();
      for (const t of tasks.filter((x) => x.kind === 'render-chunk' && x.finishedAt && x.worker)) {
        lastEnd.set(t.worker!, Math.max(lastEnd.get(t.worker!) ?? 0, Date.parse(t.finishedAt!)));
        frames.set(t.worker!, (frames.get(t.worker!) ?? 0) + (t.frames?.length ?? 0));
      }
      const ends = [...lastEnd.values()];
      return {
        seconds: r.seconds,
        spread: ends.length > 1 ? (Math.max(...ends) - Math.min(...ends)) / 1000 : NaN,
        counts: [...frames.entries()].map(([w, n]) => `${w}: ${n}`).join(', '),
      };
    },
  );
  const ratio = seconds / ideal;
  return {
    rows: [
      {
        scene: 'heavy, 2 workers x 1 thread',
        run:
          `bare, 2 processes at once, 1 thread and 1 core each, ${k} frames between them spread over the shot ` +
          `(every ${step}th; reference)`,
        'wall s': s2(ref.seconds),
        'load s': s2(load),
        'frame s': s2(frameS),
      },
      {
        scene: 'heavy, 2 workers x 1 thread',
        run: 'service, 2 workers',
        'wall s': s2(seconds),
        'frames per slot': counts,
        'last frames end within s': s2(spread),
      },
    ],
    verdicts: [
      {
        scene: 'heavy, 2 workers x 1 thread',
        'ideal s (load + frames x frame / 2)': s2(ideal),
        'service s': s2(seconds),
        'service / ideal': `${ratio.toFixed(3)}x`,
        target: `<= ${target}x`,
        verdict: verdict(ratio <= target),
      },
    ],
    pass: ratio <= target,
  };
}

/** A warm Blender killed once mid-job: how many frames were begun twice (from the worker's billing log). */
export async function killMidJob(s: Scene, atFramesDone: number): Promise<Outcome> {
  const logFile = path.join(os.tmpdir(), `rb-bench-kill-${process.pid}.log`);
  const begun = new Map<number, number>();
  const { seconds, killed } = await withService({ slots: 1, logFile }, async (svc) => {
    let killedPid: number | undefined;
    const id = await validatedJob(svc.client, s.file);
    const r = await timedRender(svc.client, id, request(s), s.frames, async (done) => {
      if (killedPid !== undefined || done < atFramesDone) return;
      killedPid = blenderOf(svc.dataDir);
      if (killedPid) process.kill(killedPid, 'SIGKILL');
    });
    for (const line of readFileSync(logFile, 'utf8').split('\n')) {
      if (!line.includes('"render time billed"')) continue;
      const p = JSON.parse(line) as { jobId?: string; frame?: number };
      if (p.jobId === id && p.frame !== undefined) begun.set(p.frame, (begun.get(p.frame) ?? 0) + 1);
    }
    return { seconds: r.seconds, killed: killedPid !== undefined };
  });
  await rm(logFile, { force: true });
  const twice = [...begun.values()].filter((n) => n > 1).length;
  const ok = killed && begun.size === s.frames && twice <= 1;
  return {
    rows: [
      {
        scene: 'subdivision, 1 kill',
        run: 'service (warm), Blender SIGKILLed mid-job',
        'wall s': s2(seconds),
        'frames begun': String(begun.size),
        'frames begun twice': String(twice),
      },
    ],
    verdicts: [
      {
        scene: 'subdivision, 1 kill',
        kills: killed ? '1' : '0 (missed)',
        'frames begun twice': String(twice),
        target: '<= 1 per kill',
        verdict: verdict(ok),
      },
    ],
    pass: ok,
  };
}

/** GET /jobs/{id}/tasks (the job-tasks extension): who ran each chunk and when it ended. */
async function jobTasks(
  svc: RenderService,
  id: string,
): Promise<{ kind: string; frames: number[] | null; worker: string | null; finishedAt: string | null }[]> {
  const res = await fetch(`${svc.baseUrl}/jobs/${id}/tasks`, { headers: { authorization: `Bearer ${svc.apiKey}` } });
  if (!res.ok) return [];
  return ((await res.json()) as { data: [] }).data;
}

/** The pid of a Blender rendering for the service on `dataDir` (its argv names the work folder). */
function blenderOf(dataDir: string): number | undefined {
  for (const pid of readdirPids()) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (path.basename(argv[0] ?? '').startsWith('blender') && argv.some((a) => a.startsWith(dataDir)))
        return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

function readdirPids(): string[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d));
}
