// Task logs of real renders (real Blender, the in-process worker, file storage): in warm mode the
// first render task's log holds the scene load and every chunk's log its frames, later chunks
// naming the task whose log holds the load; a failing render's log holds Blender's own error;
// in chunked mode each chunk's log is its Blender process from start to exit; a follow started
// while the job runs ends by itself once the job has completed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, shadowedCameraZip } from '../helpers/fixtures.js';
import {
  blenderProcesses,
  startE2E,
  submit,
  tinyRender,
  validationOutcome,
  waitUntil,
  workDirOf,
  type E2E,
} from '../helpers/e2e.js';

let warm: E2E;
let chunked: E2E;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-e2e-task-logs-'));
  warm = await startE2E();
  chunked = await startE2E({ renderMode: 'chunked' });
}, 120_000);
afterAll(async () => {
  await warm?.svc.close();
  await chunked?.svc.close();
  await rm(scratch, { recursive: true, force: true });
});

/** The text of GET /jobs/{id}/logs split into its runs: header line -> body. */
function runsOf(text: string): { header: string; body: string }[] {
  return text
    .split(/^(?===> task )/m)
    .filter((p) => p.startsWith('==> task '))
    .map((p) => ({ header: p.slice(0, p.indexOf('\n')), body: p.slice(p.indexOf('\n') + 1) }));
}

async function logText(e: E2E, id: string, query: Parameters<E2E['client']['jobLogs']>[1] = {}): Promise<string> {
  let text = '';
  for await (const part of e.client.jobLogs(id, query)) text += part;
  return text;
}

describe('warm mode', () => {
  it(
    "keeps every task's log: the load in the first render task's, each frame in its own task's, followed live " +
      'to the end',
    async () => {
      const { client, svc } = warm;
      const id = await submit(client, await buildFixture('basic'));
      expect((await validationOutcome(client, id)).status).toBe('validated');
      await client.renderJob(id, tinyRender('1-3', { sampleCount: 64 }));
      // Follow from now: the stream ends by itself once the job has completed.
      const followed = logText(warm, id, { follow: true });
      const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 180_000 });
      expect(done.status).toBe('completed');
      const live = await followed;
      expect(live).toMatch(/\[renderbridge\] job completed: end of the log\n$/);

      // The finalize task completes the job, then closes its own log: wait for that, as the failed
      // render below waits for its task's log.
      await waitUntil("every task's log to be closed, finalize's included", async () => {
        const index = await client.jobLogIndex(id);
        return index.tasks.some((t) => t.kind === 'finalize' && t.attempts.length > 0) &&
          index.tasks.every((t) => t.attempts.every((a) => !a.live))
          ? true
          : undefined;
      });
      const runs = runsOf(await logText(warm, id));
      const kinds = runs.map((r) => /\((\w[\w-]*)/.exec(r.header)![1]);
      expect(kinds[0]).toBe('validate');
      expect(kinds[1]).toBe('render');
      expect(kinds.at(-1)).toBe('finalize');
      const chunks = runs.filter((r) => r.header.includes('(render-chunk'));
      expect(chunks.length).toBeGreaterThanOrEqual(1);
      for (const r of runs) expect(r.header, r.header).toMatch(/, attempt 1, worker \S+: done <==$/);
      // Validation ran Blender: its analysis output is in its log.
      expect(runs[0]!.body).toMatch(/Blender/);
      // The first chunk holds the scene load; every chunk its frames as Blender printed them.
      expect(chunks[0]!.body).toMatch(/loads the scene for this job/);
      expect(chunks[0]!.body).toMatch(/Read blend/);
      for (const c of chunks) {
        const frames = /frames ([\d,-]+)\)/.exec(c.header)![1]!;
        const first = Number(frames.split(/[-,]/)[0]);
        expect(c.body, c.header).toMatch(new RegExp(`Z Fra:${first} `));
        expect(c.body, c.header).toMatch(/Saved: /);
        expect(c.body).toMatch(/\[renderbridge\] attempt ended: done\n+$/);
      }
      for (const c of chunks.slice(1))
        expect(c.body).toMatch(/loaded the scene during task chunk:\S+ attempt 1: that task's log holds the load/);
      // Worker folders never reach the client.
      expect(live + runs.map((r) => r.body).join('')).not.toContain(svc.dataDir);

      const index = await client.jobLogIndex(id);
      expect(
        index.tasks.every((t) => t.attempts.length === 1 && t.attempts[0]!.state === 'done' && !t.attempts[0]!.live),
      ).toBe(true);
    },
    300_000,
  );

  it("keeps Blender's own error in the log of a render that fails", async () => {
    const { client } = warm;
    const zip = await shadowedCameraZip(scratch);
    const id = await submit(client, zip, { pathToFileForRender: 'shot/scene.blend' });
    expect((await validationOutcome(client, id)).status).toBe('validated');
    await client.renderJob(id, tinyRender('1-2'));
    const job = await client.waitForStatus(id, ['failed'], { intervalMs: 200, timeoutMs: 120_000 });
    expect(job.failedReason?.name).toBe('BLENDER_FAILED');
    // The failed task's log is closed by its worker right after the job failed.
    const failed = await waitUntil("the failed task's log to be closed", async () => {
      const index = await client.jobLogIndex(id);
      return index.tasks.find((t) => t.kind === 'render-chunk' && t.attempts.some((a) => a.state === 'failed'));
    });
    const text = await logText(warm, id, { task: failed.id });
    expect(text).toContain("RB_SETUP_ERROR: camera 'Shot' not found");
    expect(text).toMatch(/attempt ended: failed: .*camera 'Shot' not found/);
  }, 240_000);
});

describe('a Blender killed mid-frame', () => {
  it("keeps the killed attempt's log (retried, with the crash) by the attempt that rendered the frame", async () => {
    const { client, svc } = warm;
    const id = await submit(client, await buildFixture('basic'));
    expect((await validationOutcome(client, id)).status).toBe('validated');
    await client.renderJob(id, tinyRender('1', { sampleCount: 4096 }));
    // Frame 1 renders, and its task's log already holds its lines, read through the API.
    const running = await waitUntil(
      'frame 1 to render, with its lines in the live log',
      async () => {
        const index = await client.jobLogIndex(id);
        const chunk = index.tasks.find((t) => t.kind === 'render-chunk' && t.attempts.some((a) => a.live));
        if (!chunk) return undefined;
        const live = await logText(warm, id, { task: chunk.id, attempt: 1 });
        const procs = blenderProcesses(workDirOf(svc, id));
        return /Z Fra:1 .*Sample/.test(live) && procs.length === 1 ? { chunk, pid: procs[0]!.pid } : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    process.kill(running.pid, 'SIGKILL');
    expect(
      (await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 180_000 })).status,
    ).toBe('completed');
    const attempts = await waitUntil("both attempts' logs closed", async () => {
      const t = (await client.jobLogIndex(id, { task: running.chunk.id })).tasks[0];
      return t && t.attempts.length === 2 && t.attempts.every((a) => !a.live) ? t.attempts : undefined;
    });
    expect(attempts.map((a) => [a.attempt, a.state])).toEqual([
      [1, 'retried'],
      [2, 'done'],
    ]);
    const first = await logText(warm, id, { task: running.chunk.id, attempt: 1 });
    expect(first).toMatch(/Z Fra:1 /);
    expect(first).toMatch(/attempt ended: retried: .*(crash|SIGKILL|exited)/i);
    const second = await logText(warm, id, { task: running.chunk.id, attempt: 2 });
    expect(second).toMatch(/Saved: /);
    expect(second).toMatch(/attempt ended: done/);
  }, 300_000);
});

describe('chunked mode', () => {
  it("keeps each chunk's Blender process from its start to its exit", async () => {
    const { client } = chunked;
    const id = await submit(client, await buildFixture('basic'));
    expect((await validationOutcome(client, id)).status).toBe('validated');
    await client.renderJob(id, tinyRender('1-2'));
    expect(
      (await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 180_000 })).status,
    ).toBe('completed');
    const chunks = runsOf(await logText(chunked, id)).filter((r) => r.header.includes('(render-chunk'));
    expect(chunks).toHaveLength(1);
    const body = chunks[0]!.body;
    expect(body).toMatch(/\[renderbridge\] Blender started \(pid \d+\) for frames 1-2\n/);
    expect(body).toMatch(/Read blend/);
    expect(body).toMatch(/Z Fra:1 (.*\n)*.*Z Fra:2 /);
    expect(body).toMatch(/\[renderbridge\] Blender exited with code 0 after [\d.]+ s\n/);
    expect(body).toMatch(/attempt ended: done\n+$/);
  }, 240_000);
});
