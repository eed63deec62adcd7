// The task logs of a real `renderbridge worker` process that reaches the service only through the
// worker API on its own token: each run's log ends with how the run really ended (`done` for the
// validate, the render planning, the render chunk and the finalize), not `interrupted`. The
// token's storage scope lets a worker write only the logs of tasks it holds, so the runtime must
// store a log's end before it tells the queue the task is done (with the old order the end was
// refused and the run read as interrupted, or had no log at all). Real service, s3rver and Blender.
import { describe, expect, it } from 'vitest';
import { tinyRender, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { useKeylessWorkers } from '../../helpers/keyless-workers.js';

const ENDED = ['completed', 'failed', 'canceled'] as const;
// Nothing of the farm's but the token: its logs go through the worker API's scoped storage.
const k = useKeylessWorkers('the remote task log test', [{ prefix: 'logs' }]);
const blender = k.blender;

/** The last line of one run's log. */
async function lastLine(jobId: string, task: string, attempt: number): Promise<string> {
  let text = '';
  for await (const part of k.client.jobLogs(jobId, { task, attempt })) text += part;
  return text.trimEnd().split('\n').at(-1) ?? '';
}

describe.skipIf(!blender)('task logs of a remote worker process', () => {
  it('end as the runs ended: validate, render, render chunk and finalize all `done`', async () => {
    let jobId: string | undefined;
    try {
      const target = await k.client.uploadProject(await buildFixture('basic'));
      jobId = (await k.client.createJob({ slug: target.slug })).id;
      const id = jobId;
      await k.client.validateJob(id, {});
      const v = await k.client.waitForStatus(id, ['validated', 'failed'], { intervalMs: 200, timeoutMs: 120_000 });
      expect(v.status, JSON.stringify(v)).toBe('validated');
      await k.client.renderJob(id, tinyRender('1'));
      const done = await k.client.waitForStatus(id, [...ENDED], { intervalMs: 200, timeoutMs: 180_000 });
      expect(done.status, JSON.stringify(done)).toBe('completed');

      // The job completes inside the finalize run: wait until the queue has settled every task.
      const tasks = await waitUntil('every task of the job settled', async () => {
        const { tasks } = await k.client.jobLogIndex(id);
        return tasks.every((t) => t.state === 'done' || t.state === null) ? tasks : undefined;
      });
      expect(tasks.map((t) => t.kind).sort()).toEqual(['finalize', 'render', 'render-chunk', 'validate']);
      for (const t of tasks) {
        expect(t.attempts, t.kind).toHaveLength(1);
        const run = t.attempts[0]!;
        expect({ kind: t.kind, state: run.state, live: run.live }).toEqual({
          kind: t.kind,
          state: 'done',
          live: false,
        });
        expect(await lastLine(id, t.id, run.attempt), t.kind).toMatch(/\[renderbridge\] attempt ended: done$/);
      }
    } catch (err) {
      if (jobId) console.error(JSON.stringify((await k.client.jobLogIndex(jobId)).tasks, null, 1).slice(0, 6000));
      console.error(k.workers[0]?.stderr().slice(-4000));
      throw err;
    }
  }, 400_000);
});
