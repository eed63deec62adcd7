// bench:render's scenario of two worker processes, one single-threaded slot each, sharing the heavy
// scene: their wall time against one load plus half the frames' time, from two bare references.
import { mean } from './render-bare.js';
import { timedRender, validatedJob, type RenderService } from './render-jobs.js';
import { verdict } from './results.js';
import { bare, request, s2, withService, type Outcome, type Scene } from './render-scenario-kit.js';

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

/** GET /jobs/{id}/tasks (the job-tasks extension): who ran each chunk and when it ended. */
async function jobTasks(
  svc: RenderService,
  id: string,
): Promise<{ kind: string; frames: number[] | null; worker: string | null; finishedAt: string | null }[]> {
  const res = await fetch(`${svc.baseUrl}/jobs/${id}/tasks`, { headers: { authorization: `Bearer ${svc.apiKey}` } });
  if (!res.ok) return [];
  return ((await res.json()) as { data: [] }).data;
}
