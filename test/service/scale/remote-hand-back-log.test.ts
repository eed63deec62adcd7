// The log of a task a real `renderbridge worker` process (worker API, its own token, no bucket key)
// hands back for a higher-priority job ends with outcome `released` and the hand-back's reason, read
// through the public task-log routes. A token writes only the logs of jobs it holds a task of: here
// the worker holds no other task of the low job when it hands back (one slot, a low job of one
// chunk), so a log ended after the queue heard the release is refused and reads `interrupted`. The
// two-worker preemption test cannot tell: a warm slot often holds the job's next chunk as well.
// Real service, s3rver and Blender.
import { describe, expect, it } from 'vitest';
import { tinyRender, waitUntil } from '../../helpers/e2e.js';
import { validatedBasicJob } from '../../helpers/keyless-worker.js';
import { useKeylessWorkers } from '../../helpers/keyless-workers.js';

const ENDED = ['completed', 'failed', 'canceled'] as const;
/** One chunk (--chunk-frames), long enough that the high job is planned before its last frame. */
const LOW_FRAMES = 24;
const k = useKeylessWorkers('the remote hand-back log test', [
  {
    prefix: 'handback',
    args: ['--render-mode', 'warm', '--preempt-priority-gap', '30', '--chunk-frames', String(LOW_FRAMES)],
  },
]);
const blender = k.blender;

const validated = () => validatedBasicJob(k.client);

/** The runs of one task attempt as GET /jobs/{id}/logs serves them: header state and last line each. */
async function runsOf(jobId: string, task: string, attempt: number): Promise<{ state: string; last: string }[]> {
  let text = '';
  for await (const part of k.client.jobLogs(jobId, { task, attempt })) text += part;
  return text
    .split(/^(?===> task )/m)
    .filter((s) => s.startsWith('==> task '))
    .map((s) => {
      const lines = s.trimEnd().split('\n');
      return { state: /: (\S+) <==$/.exec(lines[0]!)?.[1] ?? '', last: lines.at(-1) ?? '' };
    });
}

describe.skipIf(!blender)('the log of a task a remote worker hands back', () => {
  it('ends `released` with the reason, though the worker holds no other task of the job', async () => {
    let low: string | undefined;
    try {
      low = await validated();
      const high = await validated();
      const id = low;
      const lowRender = tinyRender(`1-${LOW_FRAMES}`, { resolution: [160, 120], sampleCount: 32 });
      await k.client.renderJob(id, { ...lowRender, scheduling: { priority: 10, previewFrames: false } });
      const queue = k.farm.svc.service.ports.queue;
      await waitUntil(
        'the low job rendering its one chunk',
        async () => {
          const runs = await queue.jobTaskRuns(id);
          const chunks = runs.filter((r) => r.kind === 'render-chunk');
          return chunks.some((r) => r.state === 'running') && ((await k.client.getJobProgress(id)).framesDone ?? 0) >= 1
            ? chunks
            : undefined;
        },
        { timeoutMs: 180_000 },
      );
      // What makes the old order fail: the slot's one task is the job's only task in flight, so once
      // it is handed back the token opens the job no more.
      const held = (await queue.jobTaskRuns(id)).filter((r) => r.state === 'running');
      expect(held.map((r) => r.kind)).toEqual(['render-chunk']);
      expect((await queue.jobTaskRuns(id)).filter((r) => r.kind === 'render-chunk')).toHaveLength(1);

      await k.client.renderJob(high, { ...tinyRender('1'), scheduling: { priority: 90, previewFrames: false } });
      const highDone = await k.client.waitForStatus(high, [...ENDED], { intervalMs: 150, timeoutMs: 180_000 });
      expect(highDone.status, JSON.stringify(highDone)).toBe('completed');
      const lowDone = await k.client.waitForStatus(id, [...ENDED], { intervalMs: 250, timeoutMs: 300_000 });
      expect(lowDone.status, JSON.stringify(lowDone)).toBe('completed');

      const tasks = await waitUntil('every task of the low job settled', async () => {
        const { tasks } = await k.client.jobLogIndex(id);
        return tasks.some((t) => t.kind === 'finalize') && tasks.every((t) => t.state === 'done' || t.state === null)
          ? tasks
          : undefined;
      });
      const chunks = tasks.filter((t) => t.kind === 'render-chunk');
      expect(chunks).toHaveLength(1);
      const chunk = chunks[0]!;
      // Handed back untouched: the run again is the same attempt.
      expect(chunk.attempts.map((a) => ({ attempt: a.attempt, state: a.state, live: a.live }))).toEqual([
        { attempt: 1, state: 'released', live: false },
        { attempt: 1, state: 'done', live: false },
      ]);
      const runs = await runsOf(id, chunk.id, 1);
      expect(runs.map((r) => r.state)).toEqual(['released', 'done']);
      const ended = /\[renderbridge\] attempt ended: released: paused for a priority-90 job after frame (\d+)$/.exec(
        runs[0]!.last,
      );
      expect(ended, runs[0]!.last).not.toBeNull();
      const frame = Number(ended![1]);
      expect(frame).toBeGreaterThanOrEqual(1);
      expect(frame).toBeLessThan(LOW_FRAMES);
      // How much room the hand-back had: the high job must be planned before the chunk's last frame.
      console.info(`handed back after frame ${frame} of ${LOW_FRAMES}`);
      expect(runs[1]!.last).toMatch(/\[renderbridge\] attempt ended: done$/);
    } catch (err) {
      if (low) console.error(JSON.stringify((await k.client.jobLogIndex(low)).tasks, null, 1).slice(0, 6000));
      console.error(k.workers[0]?.stderr().slice(-4000));
      throw err;
    }
  }, 600_000);
});
