// Preemption at frame boundaries in warm mode (extension scheduling, preemptPriorityGap), with real
// Blender on SQLite and one render slot: a long low-priority job renders, a high-priority job is
// asked for, and the slot hands the low job's task back after the frame it is on. The high job
// renders and completes while the low one waits; the low one then completes with every frame
// rendered exactly once, its kept frames not rendered again, and no attempt spent.
import { describe, expect, it } from 'vitest';
import type { JobTask } from '../../shared/api/dashboard.js';
import { tinyRender, useE2E, waitUntil } from '../helpers/e2e.js';

const LOW_FRAMES = 40;

// One slot, warm (the default): a gap of 30 lets priority 90 take the slot from priority 10.
const e2e = useE2E({ workers: 1, preemptPriorityGap: 30 });
const { call, validated } = e2e;

async function logText(id: string): Promise<string> {
  let text = '';
  for await (const part of e2e.client.jobLogs(id, {})) text += part;
  return text;
}

const chunks = async (id: string): Promise<JobTask[]> =>
  (await call<{ data: JobTask[] }>('GET', `/jobs/${id}/tasks`)).body.data.filter((t) => t.kind === 'render-chunk');

describe('preemption at frame boundaries (warm mode)', () => {
  it('hands the low job back after a frame, renders the high one, then the rest of the low one', async () => {
    const low = await validated();
    const high = await validated();
    // Frames slow enough that the low job is far from done when the high one is asked for.
    const lowRender = tinyRender(`1-${LOW_FRAMES}`, { resolution: [160, 120], sampleCount: 32 });
    await e2e.client.renderJob(low, { ...lowRender, scheduling: { priority: 10, previewFrames: false } });
    await waitUntil(
      'the low job to render its first frames',
      async () => {
        return ((await e2e.client.getJobProgress(low)).framesDone ?? 0) >= 2;
      },
      { timeoutMs: 120_000 },
    );

    await e2e.client.renderJob(high, { ...tinyRender('1-2'), scheduling: { priority: 90, previewFrames: false } });
    const highDone = await e2e.client.waitForStatus(high, ['completed', 'failed'], {
      intervalMs: 150,
      timeoutMs: 120_000,
    });
    expect(highDone.status).toBe('completed');
    // The high job did not wait for the low one to end.
    const lowMeanwhile = await e2e.client.getJob(low);
    expect(lowMeanwhile.status).toBe('rendering');
    expect((await e2e.client.getJobProgress(low)).framesDone).toBeLessThan(LOW_FRAMES);

    const lowDone = await e2e.client.waitForStatus(low, ['completed', 'failed'], {
      intervalMs: 250,
      timeoutMs: 240_000,
    });
    expect(lowDone.status).toBe('completed');
    const downloads = await e2e.client.getDownloads(low);
    const names = (downloads.frameOutputs ?? []).map((f) => f.fileName);
    const expected = Array.from({ length: LOW_FRAMES }, (_, i) => `f_${String(i + 1).padStart(4, '0')}.png`);
    expect(names).toEqual(expected);
    expect(await e2e.client.getJobProgress(low)).toMatchObject({ framesDone: LOW_FRAMES, framesFailed: 0 });

    // No attempt spent: every chunk of the low job ran as its first attempt.
    for (const t of await chunks(low)) expect([t.id, t.attempt, t.state]).toEqual([t.id, 1, 'done']);

    // The task logs say what paused the job, and that each frame began in Blender exactly once.
    await waitUntil('every task log of the low job closed', async () => {
      const index = await e2e.client.jobLogIndex(low);
      return index.tasks.some((t) => t.kind === 'finalize' && t.attempts.length > 0) &&
        index.tasks.every((t) => t.attempts.every((a) => !a.live))
        ? true
        : undefined;
    });
    const text = await logText(low);
    expect(text).toMatch(/: released <==/);
    expect(text).toMatch(/paused for a priority-90 job (after|before) frame \d+/);
    const begun = [...text.matchAll(/frame (\d+) begun in warm Blender/g)].map((m) => Number(m[1]));
    expect(begun.sort((a, b) => a - b)).toEqual(Array.from({ length: LOW_FRAMES }, (_, i) => i + 1));

    // The high job's frames started before the low job's last frame did.
    const highStart = Math.min(...(await chunks(high)).map((t) => Date.parse(t.startedAt!)));
    const lowLast = Math.max(...(await chunks(low)).map((t) => Date.parse(t.startedAt!)));
    expect(highStart).toBeLessThan(lowLast);
  }, 480_000);
});
