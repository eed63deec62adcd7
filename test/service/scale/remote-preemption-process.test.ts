// Preemption on real `renderbridge worker` processes that reach the service only through the
// internal worker API (their own tokens, no queue or database URL, no bucket key: frames staged
// through the storage routes). Two warm workers of one slot each render a low-priority job; a
// one-frame job of priority 90 frees exactly one of them (one hand-back place for its one task),
// the low job says why its frames wait (Job.preemption), and the low job then completes with no
// frame begun twice, whichever machine ran the handed-back task again (it fetches the frames the
// other finished, as a retry does; in practice the other machine, busy with its own chunk no more).
// Real service, s3rver and Blender.
import { describe, expect, it } from 'vitest';
import type { PreemptionNotice } from '../../../shared/api/preemption.js';
import type { TaskLogTask } from '../../../shared/api/task-logs.js';
import { tinyRender, waitUntil } from '../../helpers/e2e.js';
import { validatedBasicJob } from '../../helpers/keyless-worker.js';
import { useKeylessWorkers } from '../../helpers/keyless-workers.js';

const ENDED = ['completed', 'failed', 'canceled'] as const;
const LOW_FRAMES = 24;
const WARM = ['--render-mode', 'warm', '--preempt-priority-gap', '30'];
const k = useKeylessWorkers('the remote preemption test', [
  { prefix: 'remote', args: WARM },
  { prefix: 'remote', args: WARM },
]);
const blender = k.blender;
let lastLow: string | undefined;

const validated = () => validatedBasicJob(k.client);

async function logText(id: string): Promise<string> {
  let text = '';
  for await (const part of k.client.jobLogs(id, {})) text += part;
  return text;
}

describe.skipIf(!blender)('preemption on remote worker processes', () => {
  it('frees one slot for a one-frame job; the low job shows why, then renders no frame twice', async () => {
    try {
      const low = await validated();
      lastLow = low;
      const high = await validated();
      const lowRender = tinyRender(`1-${LOW_FRAMES}`, { resolution: [160, 120], sampleCount: 32 });
      await k.client.renderJob(low, { ...lowRender, scheduling: { priority: 10, previewFrames: false } });
      await waitUntil(
        'both workers rendering the low job',
        async () => {
          const runs = await k.farm.svc.service.ports.queue.jobTaskRuns(low);
          const busy = new Set(runs.filter((r) => r.state === 'running').map((r) => r.worker?.split(':')[0]));
          return busy.size === 2 && ((await k.client.getJobProgress(low)).framesDone ?? 0) >= 2;
        },
        { timeoutMs: 180_000 },
      );

      // What GET /jobs/{id} says of the low job while the high one renders.
      const notices: PreemptionNotice[] = [];
      let watching = true;
      const watch = (async () => {
        while (watching) {
          const p = (await k.client.getJob(low)).preemption;
          if (p) notices.push(p);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      await k.client.renderJob(high, { ...tinyRender('1'), scheduling: { priority: 90, previewFrames: false } });
      const highDone = await k.client.waitForStatus(high, [...ENDED], { intervalMs: 150, timeoutMs: 180_000 });
      expect(highDone.status, JSON.stringify(highDone)).toBe('completed');
      expect((await k.client.getJob(low)).status).toBe('rendering');

      const lowDone = await k.client.waitForStatus(low, [...ENDED], { intervalMs: 250, timeoutMs: 300_000 });
      watching = false;
      await watch;
      expect(lowDone.status, JSON.stringify(lowDone)).toBe('completed');
      expect(lowDone.preemption ?? null).toBeNull();
      expect(notices.length).toBeGreaterThan(0);
      expect(notices[0]!.reason).toMatch(/^paused for a priority-90 job (after|before) frame \d+$/);
      expect(notices[0]).toMatchObject({ priority: 90, tasks: [expect.stringContaining(low)] });

      const names = ((await k.client.getDownloads(low)).frameOutputs ?? []).map((f) => f.fileName);
      expect(names).toEqual(Array.from({ length: LOW_FRAMES }, (_, i) => `f_${String(i + 1).padStart(4, '0')}.png`));

      // A remote worker's token writes only the logs of tasks it holds: the runtime ends a run's log
      // before it hands the task back, so the hand-back reads `released`, not `interrupted`.
      const handedBack = (t: TaskLogTask) => t.attempts.slice(0, -1);
      await waitUntil('the finalize log of the low job', async () => {
        const index = await k.client.jobLogIndex(low);
        return index.tasks.some((t) => t.kind === 'finalize' && t.attempts.length > 0) ? true : undefined;
      });
      const index = await k.client.jobLogIndex(low);
      const released = index.tasks
        .filter((t) => t.kind === 'render-chunk')
        .flatMap((t) => handedBack(t).map((a, i) => ({ by: a.worker, state: a.state, next: t.attempts[i + 1] })));
      // One task waited, so one slot of the two workers handed back: not one per worker. No attempt spent.
      expect(released).toHaveLength(1);
      expect(released[0]!.state).toBe('released');
      const chunkRuns = index.tasks.filter((t) => t.kind === 'render-chunk').flatMap((t) => t.attempts);
      expect(chunkRuns.every((a) => a.attempt === 1)).toBe(true);
      expect(released[0]!.next?.state).toBe('done');
      const text = await logText(low);
      const begun = [...text.matchAll(/frame (\d+) begun in warm Blender/g)].map((m) => Number(m[1]));
      // No frame began twice, on whichever machine, the handed-back task's included.
      expect(begun.length).toBeGreaterThan(LOW_FRAMES / 2);
      expect(begun.length).toBe(new Set(begun).size);
      const machine = (w: string | null | undefined) => w?.split(/[:/]/)[0];
      console.info(
        `handed back by ${machine(released[0]!.by)}, run again by ${machine(released[0]!.next?.worker)}` +
          (machine(released[0]!.by) !== machine(released[0]!.next?.worker) ? ' (another machine)' : ''),
      );
    } catch (err) {
      const low = lastLow;
      if (low) console.error(JSON.stringify((await k.client.jobLogIndex(low)).tasks, null, 1).slice(0, 6000));
      for (const w of k.workers) console.error(`--- ${w.name}\n${w.stderr().slice(-3000)}`);
      throw err;
    }
  }, 600_000);
});
