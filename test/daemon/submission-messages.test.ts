// The messages a submission can end with, each caused for real (runSubmission, as the daemon and
// `renderbridge submit` run it, with the real packer and the real service): each names the real
// cause and says what to do, and only a service that does not answer is blamed on the service
// URL. The tray notifies these (no job exists yet); the add-on and the CLI print "NAME: message".
// PACK_CHANGED over the blob upload is caused in pack-snapshot.test.ts. A job that fails on the farm
// ends the submission with its failedReason's own name (BLENDER_FAILED here). Two the reference
// service never causes are caused elsewhere: JOB_FAILED (a job ended `failed` without a reason, which
// the spec allows and this service never does) against a spec-only stand-in farm in
// job-failed-no-reason.test.ts, and SIZE_MISMATCH (every try of a download got fewer bytes than
// announced) through a stand-in proxy in front of the storage in download-size-mismatch.test.ts.
import { randomBytes } from 'node:crypto';
import { createWriteStream, truncateSync } from 'node:fs';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationFor, submissionNotification } from '../../electron/core/notifications.js';
import { RenderJobClient } from '../../shared/client/client.js';
import type { Submission, SubmitRequest } from '../../shared/daemon/submission-schemas.js';
import { runSubmission, type SubmissionDeps } from '../../daemon/submit/run.js';
import { createPacker } from '../../daemon/pack/packer.js';
import { createTracer } from '../../daemon/trace.js';
import { pipeline } from 'node:stream/promises';
import { buildFixture, buildFixtureZip } from '../helpers/fixtures.js';
import { startTestService } from '../helpers/service.js';
import { startSubmitStack, type SubmitStack } from './harness.js';

let stack: SubmitStack;
let zip: string;

beforeAll(async () => {
  stack = await startSubmitStack('rb-submission-messages-');
  zip = path.join(stack.scratch, 'shot.zip');
  await buildFixtureZip(['basic'], zip);
}, 180_000);
afterAll(() => stack?.close());

const settings = { frames: ['1'], renderConfig: { resolution: [64, 48] as [number, number], sampleCount: 4 } };

function deps(extra: Partial<SubmissionDeps> = {}): SubmissionDeps {
  return {
    clients: stack.clients,
    packer: stack.packer,
    downloadsDir: path.join(stack.scratch, 'out'),
    pollMs: 200,
    progressIntervalMs: 0,
    ...extra,
  };
}

/** The failed submission's error, checked for what every such message must do. */
function failure(s: Submission, name: string, says: RegExp): NonNullable<Submission['error']> {
  expect(s.step).toBe('failed');
  const e = s.error;
  expect(e?.name, JSON.stringify(e)).toBe(name);
  expect(e?.message).toMatch(says);
  if (name !== 'SERVICE_UNREACHABLE') expect(e?.message).not.toMatch(/service URL/);
  return e as NonNullable<Submission['error']>;
}

describe('what a failed submission says', () => {
  it('a project path that does not exist: PACK_FAILED naming it', async () => {
    const missing = path.join(stack.scratch, 'nowhere', 'shot.blend');
    const s = await runSubmission({ pack: { path: missing }, settings, download: false }, deps());
    failure(s, 'PACK_FAILED', /nowhere\/shot\.blend" does not exist; check the path/);
  });

  it('a pack folder the daemon cannot make: PACK_FAILED naming it, not a failure "unexpectedly"', async () => {
    // A file where the daemon's work folder should be: its pack folders cannot be made.
    await writeFile(path.join(stack.scratch, 'not-a-folder'), 'a file');
    const workDir = path.join(stack.scratch, 'not-a-folder', 'packs');
    const packer = createPacker({
      workDir,
      trace: createTracer({ blender: 'blender' }),
      createdBy: 'renderbridge-test',
    });
    const folder = path.join(stack.scratch, 'unpackable');
    await mkdir(folder, { recursive: true });
    await copyFile(await buildFixture('basic'), path.join(folder, 'scene.blend'));
    const s = await runSubmission({ pack: { path: folder }, settings, download: false }, deps({ packer }));
    const e = failure(
      s,
      'PACK_FAILED',
      /^The daemon's pack folder ".*" cannot be created \(ENOTDIR: .*\); check its free space and permissions, then retry\.$/,
    );
    expect(e.message).toContain(workDir);
  });

  it(
    'a scene that fails to render on the farm: the failedReason (BLENDER_FAILED) with its job; the tray says ' +
      '"Render failed"',
    async () => {
      // Validation sees the camera; Blender, at render time, cannot resolve it (its library shadows it).
      const s = await runSubmission(
        { pack: { path: await buildFixture('shadowed-camera') }, settings, download: false },
        deps(),
      );
      const e = failure(s, 'BLENDER_FAILED', /camera 'Shot' not found/);
      expect(s.jobId).toEqual(expect.any(String));
      expect(e.metadata).toMatchObject({
        jobId: s.jobId,
        status: 'failed',
        failedReason: { name: 'BLENDER_FAILED', type: 'RENDER_FAILED' },
      });
      // A job exists: the tray notifies its renderComplete, not the submission.
      expect(submissionNotification(s)).toBeNull();
      const job = await stack.e2e.client.getJob(s.jobId!);
      expect(notificationFor({ jobId: job.id, status: 'failed', job, outDir: null })).toMatchObject({
        title: 'Render failed',
        body: expect.stringMatching(/ failed — BLENDER_FAILED: .*camera 'Shot' not found/) as string,
      });
    },
    240_000,
  );

  it('a pack id the daemon no longer has: DAEMON_NOT_FOUND, pack again', async () => {
    const s = await runSubmission({ packId: 'gone', settings, download: false }, deps());
    failure(s, 'DAEMON_NOT_FOUND', /pack the project again/);
  });

  it(
    'a zip deleted between pack and upload: PACK_CHANGED naming it, not the service; the stale pack is not ' +
      'sent again',
    async () => {
      const own = path.join(stack.scratch, 'own.zip');
      await copyFile(zip, own);
      const pack = await stack.packer.pack({ path: own });
      await rm(own);
      const s = await runSubmission({ packId: pack.packId, settings, download: false }, deps());
      const e = failure(
        s,
        'PACK_CHANGED',
        /could not be read for the upload \(it was moved or deleted\): restore it or pack the project again/,
      );
      expect(e.message).toContain(own);
      expect(submissionNotification(s)?.body).toContain(own);
      // Submitting the same pack again says to pack again, rather than failing the same way.
      const again = await runSubmission({ packId: pack.packId, settings, download: false }, deps());
      failure(again, 'DAEMON_NOT_FOUND', /dropped when one of its files changed.*pack the project again/);
    },
  );

  it('a zip rewritten while it is being sent: PACK_CHANGED naming it, pack again', async () => {
    // The scene and 8 MiB of noise (stored): the PUT is far from its end at its first progress.
    const own = path.join(stack.scratch, 'rewritten.zip');
    const specifier: string = 'archiver';
    const { ZipArchive } = (await import(specifier)) as {
      ZipArchive: new (o: { zlib?: { level: number } }) => NodeJS.ReadableStream & {
        file(p: string, o: { name: string }): void;
        append(b: Buffer, o: { name: string; store: boolean }): void;
        finalize(): Promise<void>;
      };
    };
    const archive = new ZipArchive({ zlib: { level: 1 } });
    archive.file(await buildFixture('basic'), { name: 'project/scene.blend' });
    archive.append(randomBytes(8 * 1024 * 1024), { name: 'project/noise.bin', store: true });
    const written = pipeline(archive, createWriteStream(own));
    await archive.finalize();
    await written;
    const pack = await stack.packer.pack({ path: own });
    let cut = false;
    const s = await runSubmission({ packId: pack.packId, settings, download: false }, deps(), (u) => {
      // Saved over by another program while the upload reads it: it now ends far sooner.
      if (!cut && u.step === 'uploading' && u.uploadedBytes > 0) {
        cut = true;
        truncateSync(own, 1024);
      }
    });
    expect(cut).toBe(true);
    const e = failure(
      s,
      'PACK_CHANGED',
      /was changed while it was being sent after the project was packed.*: pack again/,
    );
    expect(e.message).toContain(own);
  });

  it(
    'a texture written in place after packing, sent to a service without the blob upload (zip): PACK_CHANGED ' +
      'naming it, pack again',
    async () => {
      const svc = await startTestService({ blobUploads: false });
      try {
        const folder = path.join(stack.scratch, 'zipped');
        await mkdir(folder, { recursive: true });
        await copyFile(await buildFixture('basic'), path.join(folder, 'scene.blend'));
        const texture = path.join(folder, 'wood.png');
        await writeFile(texture, randomBytes(64 * 1024));
        const pack = await stack.packer.pack({ path: folder });
        // Repainted and saved over the same file: the pack's link sees the new bytes too.
        await writeFile(texture, randomBytes(64 * 1024));
        const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
        const clients = { client: async () => client, apiKeySource: async () => 'env' as const };
        const s = await runSubmission({ packId: pack.packId, settings, download: false }, deps({ clients }));
        const e = failure(
          s,
          'PACK_CHANGED',
          /was changed after the project was packed, so the farm would not render what was packed: pack again/,
        );
        expect(e.message).toContain(texture);
        expect(s.upload).toBeNull();
        // Dropped: the same pack is not zipped again.
        const again = await runSubmission({ packId: pack.packId, settings, download: false }, deps({ clients }));
        failure(again, 'DAEMON_NOT_FOUND', /pack the project again/);
      } finally {
        await svc.close();
      }
    },
  );

  it(
    "upload URLs that have always expired (this clock far ahead of the service's): SUBMISSION_FAILED, check " +
      'the clock',
    async () => {
      // The service signs part URLs that expired an hour before they are handed out, as a client
      // whose clock runs more than the URLs' lifetime ahead sees every one of them.
      const svc = await startTestService({ uploadUrlTtlSeconds: -3600 });
      try {
        const folder = path.join(stack.scratch, 'skewed');
        await mkdir(folder, { recursive: true });
        await copyFile(await buildFixture('basic'), path.join(folder, 'scene.blend'));
        await writeFile(path.join(folder, 'notes.txt'), 'a second file');
        const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
        const s = await runSubmission(
          { pack: { path: folder }, settings, download: false },
          deps({ clients: { client: async () => client, apiKeySource: async () => 'env' } }),
        );
        const e = failure(
          s,
          'SUBMISSION_FAILED',
          /upload URLs had expired each time before the parts could be sent \(20 queries\)\. Check that this computer's clock is right.*then submit again/,
        );
        expect(e.metadata).toEqual({ queries: 20 });
        expect(s.jobId).toBeNull();
        expect(submissionNotification(s)?.body).toMatch(/clock/);
      } finally {
        await svc.close();
      }
    },
  );

  it('a service that does not answer: SERVICE_UNREACHABLE naming the URL, check the service URL', async () => {
    // A port that was just free: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const dead = new RenderJobClient({
      baseUrl: `http://127.0.0.1:${port}/api/external/v1`,
      apiKey: 'rb_x',
      maxRetries: 0,
    });
    const s = await runSubmission(
      { pack: { path: zip }, settings, download: false },
      deps({ clients: { client: async () => dead, apiKeySource: async () => 'env' } }),
    );
    const e = failure(s, 'SERVICE_UNREACHABLE', /check the service URL and that the service is running/);
    expect(e.message).toContain(`127.0.0.1:${port}`);
  });

  it('a submission stopped during its upload: SUBMISSION_ABORTED, submit again', async () => {
    const abort = new AbortController();
    const req: SubmitRequest = { pack: { path: zip }, settings, download: false };
    const s = await runSubmission(
      req,
      deps(),
      (u) => {
        if (u.step === 'uploading') abort.abort(new Error('interrupted'));
      },
      { signal: abort.signal },
    );
    failure(s, 'SUBMISSION_ABORTED', /submit again/);
    // Stopped on purpose: the tray does not notify it.
    expect(submissionNotification(s)).toBeNull();
  });
});
