// Renders that fail for good, through the public API with real Blender: a frame whose Blender is
// killed on every attempt (RETRIES_EXHAUSTED after exactly `maxAttempts` attempts) and a scene whose
// camera name makes Blender exit with an error (BLENDER_FAILED at once, never retried). Both
// reports carry what docs/reference/api-decisions.md, "Rendering", promises: attempts, lastFrame and
// Blender's last lines.
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
  type ProcInfo,
} from '../helpers/e2e.js';

/** The attempts configured for the worker (the default, set here so the test states it). */
const ATTEMPTS = 3;
/** Samples making one 64x48 frame last several seconds here: no attempt of frame 1 can finish before it is killed. */
const SLOW_SAMPLES = 4096;

let e2e: E2E;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-e2e-render-fail-'));
  e2e = await startE2E({ worker: { runtime: { maxAttempts: ATTEMPTS, retryBaseMs: 100 } } });
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('Blender killed on every attempt of a frame', () => {
  it(
    `fails the job with RETRIES_EXHAUSTED after ${ATTEMPTS} attempts of that frame, naming it and the last ` + `lines`,
    async () => {
      const { client, svc } = e2e;
      const id = await submit(client, await buildFixture('basic'));
      expect((await validationOutcome(client, id)).status).toBe('validated');
      await client.renderJob(id, tinyRender('1-3', { sampleCount: SLOW_SAMPLES }));
      const workDir = workDirOf(svc, id);

      const killed: ProcInfo[] = [];
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        // A Blender of this job not killed yet, rendering frame 1. Processes are read before progress:
        // a failed attempt publishes its progress (frame 1 no longer in flight) at once, so frame 1
        // in flight seen after a new process is that process's own.
        const blender = await waitUntil(
          `attempt ${attempt} of frame 1 to render`,
          async () => {
            const fresh = blenderProcesses(workDir).filter((p) => !killed.some((k) => k.pid === p.pid));
            if (fresh.length !== 1) return undefined;
            const progress = await client.getJobProgress(id);
            if (progress.status === 'failed' || progress.status === 'completed')
              throw new Error(`the job ended (${progress.status}) at attempt ${attempt}`);
            return progress.currentFrame === 1 && (progress.framesRendering ?? 0) > 0 ? fresh[0] : undefined;
          },
          { timeoutMs: 120_000, intervalMs: 50 },
        );
        expect(blender.argv).toContain('-Y');
        process.kill(blender.pid, 'SIGKILL');
        killed.push(blender);
      }

      const job = await client.waitForStatus(id, ['failed'], { intervalMs: 200, timeoutMs: 60_000 });
      expect(job.failedReason).toMatchObject({ name: 'RETRIES_EXHAUSTED', type: 'RENDER_FAILED' });
      const details = job.failedReason!.errorDetails;
      expect(details.attempts).toBe(ATTEMPTS);
      expect(String(details.message)).toContain(`after ${ATTEMPTS} attempts`);
      expect(String(details.message)).toMatch(/SIGKILL/);
      expect(details.lastFrame).toBe(1);
      const lastLines = details.lastLines as string[];
      expect(lastLines.length).toBeGreaterThan(0);
      expect(lastLines.length).toBeLessThanOrEqual(20);
      expect(lastLines.some((l) => l.startsWith('Fra:1 '))).toBe(true);
      // Worker folders and Blender's argv stay on the worker.
      expect(details.argv).toBeUndefined();
      expect(JSON.stringify(job.failedReason)).not.toContain(svc.dataDir);
      // No attempt beyond the configured ones: nothing runs for the failed job.
      await waitUntil("the job's Blender to be gone", () => blenderProcesses(workDir).length === 0, {
        timeoutMs: 30_000,
      });
    },
    300_000,
  );
});

describe('Blender errors out on the camera', () => {
  it("fails the job with BLENDER_FAILED at the first attempt, with Blender's error in the last lines", async () => {
    const { client, svc } = e2e;
    const zip = await shadowedCameraZip(scratch);

    const id = await submit(client, zip, { pathToFileForRender: 'shot/scene.blend' });
    const validated = await validationOutcome(client, id);
    expect(validated.failedReason ?? null).toBeNull();
    expect(validated.status).toBe('validated');
    // Validation sees the camera; only Blender, at render time, cannot resolve its name.
    expect(validated.analysis?.output?.sceneCameras?.map((c) => c.objectName)).toEqual(['Shot']);

    await client.renderJob(id, tinyRender('1-4'));
    const job = await client.waitForStatus(id, ['failed'], { intervalMs: 200, timeoutMs: 120_000 });
    expect(job.failedReason).toMatchObject({ name: 'BLENDER_FAILED', type: 'RENDER_FAILED' });
    const details = job.failedReason!.errorDetails;
    expect(details.attempts).toBe(1);
    expect(details.exitCode).toBe(3);
    expect(details.lastFrame).toBeNull();
    const lastLines = (details.lastLines as string[]).join('\n');
    expect(lastLines).toContain("RB_SETUP_ERROR: camera 'Shot' not found");
    expect(String(details.message)).toContain("camera 'Shot' not found");
    expect(JSON.stringify(job.failedReason)).not.toContain(svc.dataDir);
    // Fatal: the task was not retried, so no Blender runs for the job any more.
    expect(blenderProcesses(workDirOf(svc, id))).toEqual([]);
  }, 240_000);
});
