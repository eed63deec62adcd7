// Submissions through the real reference service with its worker and real Blender: a fixture zip
// (inspected by the real packer) is uploaded, created, validated, rendered and downloaded; a scene
// that cannot render and a refused request end `failed` with the service's reasons.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import type { DaemonEvent } from '../../shared/daemon/api.js';
import type { Submission, SubmitRequest } from '../../shared/daemon/submission-schemas.js';
import { downloadJobOutputs } from '../../daemon/download/job.js';
import type { ClientProvider, Packer } from '../../daemon/ports.js';
import { runSubmission } from '../../daemon/submit/run.js';
import { createSubmissions } from '../../daemon/submit/submissions.js';
import { buildFixtureZip } from '../helpers/fixtures.js';
import { filesUnder, type E2E } from '../helpers/e2e.js';
import { startSubmitStack, type SubmitStack } from './harness.js';

let e2e: E2E;
let scratch: string;
let packer: Packer;
let clients: ClientProvider;

let stack: SubmitStack | undefined;

beforeAll(async () => {
  stack = await startSubmitStack('rb-submit-');
  ({ e2e, scratch, packer, clients } = stack);
}, 120_000);
afterAll(() => stack?.close());

const tiny = { resolution: [64, 48] as [number, number], sampleCount: 4 };

function request(zip: string, extra: Partial<SubmitRequest> = {}): SubmitRequest {
  return { pack: { path: zip }, settings: { frames: ['1-2'], renderConfig: tiny }, download: true, ...extra };
}

/** The steps of a run's events, repeats collapsed. */
function steps(updates: Submission[]): string[] {
  return updates.map((s) => s.step).filter((s, i, all) => i === 0 || all[i - 1] !== s);
}

describe('createSubmissions', () => {
  it(
    'takes a zip through every step, publishing upload bytes, and downloads the outputs with their compositor ' +
      'folders',
    async () => {
      const zip = path.join(scratch, 'shot.zip');
      await buildFixtureZip(['compositor'], zip);
      const events: DaemonEvent[] = [];
      const downloadsDir = path.join(scratch, 'outputs');
      const submissions = createSubmissions({
        clients,
        packer,
        events: { publish: (e) => events.push(e) },
        downloadsDir,
        pollMs: 200,
        progressIntervalMs: 0,
      });

      const started = submissions.start(request(zip));
      expect(started.step).toBe('packing');
      const final = await submissions.settled(started.id);
      expect(final.error).toBeNull();
      expect(final.step).toBe('done');
      expect(submissions.get(started.id)).toEqual(final);
      expect(submissions.list().map((s) => s.id)).toEqual([started.id]);

      const updates = events.filter((e) => e.event === 'submission').map((e) => e.data as Submission);
      expect(updates.every((s) => s.id === started.id)).toBe(true);
      expect(steps(updates)).toEqual(['packing', 'uploading', 'creating', 'validating', 'rendering', 'done']);
      const size = (await stat(zip)).size;
      const uploading = updates
        .filter((s) => s.step === 'uploading' && s.uploadedBytes > 0)
        .map((s) => s.uploadedBytes);
      expect(uploading.length).toBeGreaterThan(1);
      expect(uploading).toEqual([...uploading].sort((a, b) => a - b));
      expect(uploading.at(-1)).toBe(size);
      expect(final).toMatchObject({ uploadedBytes: size, totalBytes: size, path: zip });
      expect(final.preflight?.blendFiles).toEqual(['project/compositor.blend']);

      // The job got the settings and the packer's preflight; the user's zip is still there.
      const job = await e2e.client.getJob(final.jobId!);
      expect(job.status).toBe('completed');
      expect(job.requestedConfig).toMatchObject({
        frameRanges: ['1-2'],
        sampleCount: 4,
        colorManagementPreset: 'default',
      });
      expect(job.uploadPreflight?.blendFiles).toEqual(['project/compositor.blend']);
      expect((await stat(zip)).size).toBe(size);

      expect(final.outDir).toBe(path.join(downloadsDir, `shot-${final.jobId!.slice(0, 8)}`));
      expect(await filesUnder(final.outDir!)).toEqual(
        [
          'FileOut/beauty_0001.png',
          'FileOut/beauty_0002.png',
          'FileOut/mask0001.png',
          'FileOut/mask0002.png',
          'f_0001.png',
          'f_0002.png',
        ].sort(),
      );
    },
    240_000,
  );

  it("ends a project that fails validation as failed, carrying the job's failedReason", async () => {
    const zip = path.join(scratch, 'nocam.zip');
    await buildFixtureZip(['odd'], zip);
    const events: DaemonEvent[] = [];
    const submissions = createSubmissions({
      clients,
      packer,
      events: { publish: (e) => events.push(e) },
      downloadsDir: path.join(scratch, 'outputs'),
      pollMs: 200,
    });
    const final = await submissions.settled(submissions.start(request(zip)).id);
    expect(final.step).toBe('failed');
    const job = await e2e.client.getJob(final.jobId!);
    expect(job.status).toBe('failed');
    expect(final.error).toMatchObject({
      name: job.failedReason!.name,
      message: job.failedReason!.errorDetails['message'],
    });
    expect(final.error?.message).toMatch(/camera/i);
    expect(final.error?.details.map((d) => d.code)).toContain('NO_CAMERA');
    expect(steps(events.map((e) => e.data as Submission))).toEqual([
      'packing',
      'uploading',
      'creating',
      'validating',
      'failed',
    ]);
  }, 120_000);
});

describe('runSubmission (no daemon)', () => {
  it("carries the service's error body when the API key is wrong", async () => {
    const zip = path.join(scratch, 'badkey.zip');
    await buildFixtureZip(['basic'], zip);
    const wrong = new RenderJobClient({ baseUrl: e2e.svc.baseUrl, apiKey: `rb_live_${'A'.repeat(43)}` });
    const final = await runSubmission(request(zip), {
      clients: { client: async () => wrong, apiKeySource: async () => 'env' },
      packer,
      downloadsDir: scratch,
    });
    expect(final).toMatchObject({ step: 'failed', jobId: null });
    expect(final.error).toMatchObject({ name: 'UNAUTHORIZED', type: 'api' });
    expect(final.error?.message).toContain('API key');
    expect(final.error?.metadata['requestId']).toEqual(expect.any(String));
    expect(JSON.stringify(final)).not.toContain('A'.repeat(43));
  }, 60_000);

  it('checks only (mode check): done once validated, the job never renders', async () => {
    const zip = path.join(scratch, 'check.zip');
    await buildFixtureZip(['basic'], zip);
    const seen: Submission[] = [];
    const final = await runSubmission(
      request(zip, { mode: 'check' }),
      { clients, packer, downloadsDir: scratch, pollMs: 200 },
      (u) => seen.push(u),
    );
    expect(final.step).toBe('done');
    expect(steps(seen)).toEqual(['packing', 'uploading', 'creating', 'validating', 'done']);
    const job = await (await clients.client()).getJob(final.jobId!);
    expect(job.status).toBe('validated');
    expect(job.analysis?.output).toBeTruthy();
  }, 120_000);

  it("carries the service's 400 body when a render setting is refused", async () => {
    const zip = path.join(scratch, 'badformat.zip');
    await buildFixtureZip(['basic'], zip);
    const final = await runSubmission(
      request(zip, { settings: { frames: ['1'], format: 'NOT_A_FORMAT', renderConfig: tiny } }),
      { clients, packer, downloadsDir: scratch, pollMs: 200 },
    );
    expect(final.step).toBe('failed');
    expect(final.error?.name).toBe('VALIDATION_ERROR');
    expect(final.error?.details.some((d) => d.path.join('.').includes('outputFormat'))).toBe(true);
  }, 120_000);

  it('stops once the render started with noWait, having sent camera, view layer, format and video', async () => {
    const zip = path.join(scratch, 'nowait.zip');
    await buildFixtureZip(['basic'], zip);
    const seen: string[] = [];
    const final = await runSubmission(
      request(zip, {
        settings: {
          frames: ['1-2'],
          camera: 'CamB',
          viewLayer: 'Alt',
          format: 'JPEG',
          video: true,
          renderConfig: tiny,
        },
      }),
      { clients, packer, downloadsDir: path.join(scratch, 'outputs'), pollMs: 200 },
      (s) => seen.push(s.step),
      { noWait: true },
    );
    expect(final.step).toBe('rendering');
    expect(final.error).toBeNull();
    expect(seen.at(-1)).toBe('rendering');
    const job = await e2e.client.getJob(final.jobId!);
    expect(job.requestedConfig).toMatchObject({
      frameRanges: ['1-2'],
      activeCamera: 'CamB',
      activeViewLayer: 'Alt',
      outputFormat: 'JPEG',
      videoOutput: true,
    });
    await e2e.client.waitForStatus(final.jobId!, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });
    const report = await downloadJobOutputs(e2e.client, final.jobId!, final.outDir!);
    expect(report.state.state).toBe('done');
    const files = await filesUnder(final.outDir!);
    expect(files.filter((f) => f.endsWith('.jpg'))).toEqual(['f_0001.jpg', 'f_0002.jpg']);
    expect(files.filter((f) => f.endsWith('.mp4'))).toHaveLength(1);
  }, 180_000);
});
