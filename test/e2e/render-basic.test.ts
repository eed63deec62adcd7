// The whole path through the public API with the shared client, real Blender and ffmpeg:
// upload, create, validate (analysis checked against the fixture), render, download; on each
// Blender of the matrix (a farm of that build alone, rendering a scene that build saved).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import { buildFixture } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { pngInfo } from '../helpers/png.js';

const run = promisify(execFile);
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-e2e-'));
}, 120_000);
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe.each(usableBuilds('the e2e render').map((b) => [b.minor, b] as const))(
  'a .blend through validate, render and download on Blender %s',
  (minor, build) => {
    let svc: TestService;
    let client: RenderJobClient;
    beforeAll(async () => {
      svc = await startTestService({
        workers: 1,
        blenderPaths: [build.path],
        blenderFromPath: false,
        worker: { runtime: { heartbeatMs: 200, pollMs: 100 } },
      });
      client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    }, 120_000);
    afterAll(async () => {
      await svc?.close();
    });

    it('renders frames 1-3 at 64x48 with an MP4, zips and a preview', async () => {
      const blend = await buildFixture('basic', { blender: build.path });
      const target = await client.uploadProject(blend);
      const job = await client.createJob({ slug: target.slug });
      await client.validateJob(job.id, {});
      const validated = await client.waitForStatus(job.id, ['validated'], { intervalMs: 200, timeoutMs: 90_000 });
      const out = validated.analysis?.output;
      expect(out?.sceneCameras?.map((c) => c.objectName).sort()).toEqual(['CamA', 'CamB']);
      expect(out?.sceneCameras?.find((c) => c.isSavedActive)?.objectName).toBe('CamA');
      expect(out?.viewLayers?.map((l) => l.name).sort()).toEqual(['Alt', 'Main']);
      expect(out?.renderFrameRange).toEqual([1, 24]);
      expect(out?.resolution).toEqual([64, 48]);
      expect(validated.analysisId).toBe(validated.analysis?.id);
      expect(validated.sceneFile).toMatchObject({ name: 'basic.blend', isSceneFile: true });

      const started = await client.renderJob(job.id, {
        requestedRenderConfig: {
          colorManagementPreset: 'default',
          frameRanges: ['1-3'],
          resolution: [64, 48],
          sampleCount: 4,
          videoOutput: true,
        },
      });
      expect(started.replay).toBe(false);
      const done = await client.waitForStatus(job.id, ['completed'], { intervalMs: 250, timeoutMs: 120_000 });
      expect(done.finalConfig).toMatchObject({
        frameRanges: ['1-3'],
        computeDeviceType: 'CPU',
        sampleCount: 4,
        videoOutput: true,
      });
      expect(done.finalConfig?.hostVersionForRender).toMatch(new RegExp(`^${minor.replace('.', '\\.')}\\.`));
      expect(done.finalConfig?.expectedOutputs?.totals.cameraFiles).toBe(3);
      expect(done.normalizedSeconds).toBeGreaterThan(0);
      expect(done.output?.scheduledForDeletionAt).not.toBeNull();
      expect(done.previewUrl).toMatch(/^http/);

      const progress = await client.getJobProgress(job.id);
      expect(progress).toMatchObject({ framesTotal: 3, framesDone: 3, framesFailed: 0, percent: 100 });

      const downloads = await client.getDownloads(job.id);
      const frames = downloads.frameOutputs ?? [];
      expect(frames.map((f) => f.fileName)).toEqual(['f_0001.png', 'f_0002.png', 'f_0003.png']);
      const png = Buffer.from(await (await fetch(frames[0]!.url)).arrayBuffer());
      const info = pngInfo(png);
      expect([info.width, info.height]).toEqual([64, 48]);

      const mp4 = downloads.transforms?.video?.mp4?.[0];
      expect(mp4?.available).toBe(true);
      const mp4File = path.join(scratch, `out-${minor}.mp4`);
      await writeFile(mp4File, Buffer.from(await (await fetch(mp4!.url!)).arrayBuffer()));
      const probe = JSON.parse(
        (await run('ffprobe', ['-v', 'error', '-count_frames', '-show_streams', '-of', 'json', mp4File])).stdout,
      ) as {
        streams: { codec_name: string; nb_read_frames: string; r_frame_rate: string; pix_fmt: string }[];
      };
      expect(probe.streams[0]).toMatchObject({
        codec_name: 'h264',
        nb_read_frames: '3',
        r_frame_rate: '24/1',
        pix_fmt: 'yuv420p',
      });

      const zipUrl = downloads.transforms?.framesZip;
      const zipFile = path.join(scratch, `frames-${minor}.zip`);
      await writeFile(
        zipFile,
        Buffer.from(await (await fetch(Array.isArray(zipUrl) ? zipUrl[0]! : zipUrl!)).arrayBuffer()),
      );
      const listing = (await run('unzip', ['-Z1', zipFile])).stdout.trim().split('\n').sort();
      expect(listing).toEqual(['f_0001.png', 'f_0002.png', 'f_0003.png']);
      expect((await readFile(zipFile)).length).toBeGreaterThan(100);
    }, 240_000);
  },
);
