// The whole bridge as the Blender add-on drives it, over the daemon's local HTTP API: the daemon
// with every real part (startBridgeDaemon: packer with headless-Blender tracing, submissions,
// downloads), a reference service with a worker, real Blender. POST /pack shows the preflight and
// the missing file before anything is uploaded; POST /submissions renders it; the SSE stream ends
// with renderComplete carrying the folder the frame was downloaded to.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { RenderComplete } from '../../shared/daemon/job-schemas.js';
import { PackResult, Submission } from '../../shared/daemon/submission-schemas.js';
import { startE2E, type E2E } from '../helpers/e2e.js';
import { buildPackProject } from '../helpers/pack-fixture.js';
import { daemonCall, openSse, startTestBridge, type SseReader } from './harness.js';

let e2e: E2E;
let daemon: RunningBridgeDaemon;
let sse: SseReader;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-bridge-'));
  e2e = await startE2E();
  daemon = await startTestBridge({
    serviceUrl: e2e.svc.baseUrl,
    apiKey: e2e.svc.apiKey,
    work,
    stateDir: path.join(work, 'state'),
  });
  sse = await openSse(daemon.origin, daemon.token);
}, 120_000);
afterAll(async () => {
  sse?.close();
  await daemon?.close();
  await e2e?.svc.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('bridge daemon, all parts', () => {
  it('packs a .blend with its preflight, renders it, announces renderComplete with the downloaded folder', async () => {
    const call = daemonCall(daemon);
    const project = await buildPackProject(path.join(work, 'project'));

    const packed = await call('POST', '/pack', { path: project.main });
    expect(packed.status, packed.text).toBe(200);
    const pack = PackResult.parse(packed.json);
    expect(pack.sceneFile).toBe('scenes/main.blend');
    expect(pack.sourcePath).toBe(project.main);
    expect(pack.preflight.source).toBe('client_zip_inspection');
    expect(pack.preflight.blendFiles).toEqual(expect.arrayContaining(['scenes/main.blend', 'libs/props.blend']));
    expect(pack.missing.map((m) => m.path)).toEqual(['//../textures/missing.png']);
    expect(pack.remaps.length).toBeGreaterThan(0);

    const outDir = path.join(work, 'shot-010');
    const started = await call('POST', '/submissions', { packId: pack.packId, settings: { frames: ['1'] }, outDir });
    expect(started.status, started.text).toBe(202);
    const submission = Submission.parse(started.json);

    const complete = await sse.waitFor(
      'renderComplete',
      (r) => r.events().find((e) => e.event === 'renderComplete')?.data,
      180_000,
    );
    const done = RenderComplete.parse(complete);
    expect(done.status).toBe('completed');
    expect(done.outDir).toBe(outDir);

    // The submission ends done once the outputs are in its folder.
    const final = await sse.waitFor(
      'the submission to end',
      (r) =>
        r
          .events()
          .filter((e) => e.event === 'submission')
          .map((e) => Submission.parse(e.data))
          .find((s) => s.id === submission.id && (s.step === 'done' || s.step === 'failed')),
      60_000,
    );
    expect(final.error).toBeNull();
    // The submission names the scene it came from, not the temporary zip.
    expect(final.path).toBe(project.main);
    expect(final.step).toBe('done');
    const steps = sse
      .events()
      .filter((e) => e.event === 'submission')
      .map((e) => Submission.parse(e.data))
      .filter((s) => s.id === submission.id)
      .map((s) => s.step);
    expect([...new Set(steps)]).toEqual(['packing', 'uploading', 'creating', 'validating', 'rendering', 'done']);
    const files = (await readdir(outDir, { recursive: true })).filter((f) => f.endsWith('.png'));
    expect(files).toHaveLength(1);

    // The job list the tray shows has it, completed, with its download done.
    const jobs = await call('GET', '/jobs');
    const tracked = (jobs.json as { jobs: { job: { id: string; status: string } }[] }).jobs.find(
      (j) => j.job.id === done.jobId,
    );
    expect(tracked?.job.status).toBe('completed');
    // The pack's zip is gone once uploaded.
    expect(await readdir(path.join(work, 'packs'))).toEqual([]);
  }, 300_000);
});
