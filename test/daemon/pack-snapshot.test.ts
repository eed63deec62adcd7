// A pack is a snapshot: the artist keeps working after pressing Render, and the farm renders what
// was packed, or the submission says in one sentence which file changed and to pack again. Through
// the real daemon (packer with headless-Blender tracing, submissions, downloads) and the real
// service with its worker and real Blender; the frames are checked pixel by pixel (the pack
// fixture's grid of textured cells, test/helpers/pack-fixture.ts). The uploads that must last
// while the artist saves go through a throttled link in a network namespace (needs root; skipped
// with a printed reason elsewhere, failing in CI).
import { mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { runBlender } from '../../blender/run.js';
import { PackResult, Submission } from '../../shared/daemon/submission-schemas.js';
import { submissionNotification } from '../../electron/core/notifications.js';
import { startE2E, waitUntil, type E2E } from '../helpers/e2e.js';
import { buildPackProject, CELLS, cellColours, mismatches, type PackProject } from '../helpers/pack-fixture.js';
import { startThrottledLink, throttledLinkUnavailable, type ThrottledLink } from '../helpers/throttled-link.js';
import { daemonCall, startTestBridge } from './harness.js';

const SAVES_SCRIPT = new URL('../fixtures/blend/build_snapshot_saves.py', import.meta.url).pathname;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-pack-snapshot-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

interface Farm {
  e2e: E2E;
  daemon: RunningBridgeDaemon;
  close(): Promise<void>;
}

let farm: Farm | undefined;
afterEach(async () => {
  await farm?.close();
  farm = undefined;
});

/** Service with its worker and a daemon talking to it, directly or through a throttled link. */
async function startFarm(
  name: string,
  opts: { link?: ThrottledLink; partSize?: number; daemonWork?: string } = {},
): Promise<Farm> {
  const e2e = await startE2E({
    blobUploads: true,
    ...(opts.link ? { publicUrl: opts.link.origin } : {}),
    ...(opts.partSize ? { blobPartSizeBytes: opts.partSize } : {}),
  });
  if (opts.link) opts.link.targetPort = Number(new URL(e2e.svc.origin).port);
  const serviceUrl = opts.link ? `${opts.link.origin}${new URL(e2e.svc.baseUrl).pathname}` : e2e.svc.baseUrl;
  const daemonWork = opts.daemonWork ?? path.join(work, name);
  const daemon = await startTestBridge({
    serviceUrl,
    apiKey: e2e.svc.apiKey,
    work: daemonWork,
    stateDir: path.join(work, name, 'state'),
  });
  return {
    e2e,
    daemon,
    async close() {
      await daemon.close();
      await e2e.svc.close();
      await opts.link?.close();
    },
  };
}

/** POST /pack: the pack, ready to submit by id. */
async function pack(f: Farm, main: string): Promise<PackResult> {
  const r = await daemonCall(f.daemon)('POST', '/pack', { path: main });
  expect(r.status, r.text).toBe(200);
  return PackResult.parse(r.json);
}

async function startSubmission(f: Farm, body: Record<string, unknown>): Promise<string> {
  const r = await daemonCall(f.daemon)('POST', '/submissions', body);
  expect(r.status, r.text).toBe(202);
  return Submission.parse(r.json).id;
}

async function submissionOf(f: Farm, id: string): Promise<Submission> {
  return Submission.parse((await daemonCall(f.daemon)('GET', `/submissions/${id}`)).json);
}

async function settle(f: Farm, id: string): Promise<Submission> {
  return waitUntil(
    `submission ${id} to end`,
    async () => {
      const s = await submissionOf(f, id);
      return s.step === 'done' || s.step === 'failed' ? s : undefined;
    },
    { timeoutMs: 240_000, intervalMs: 200 },
  );
}

/** The colours of frame 1 as downloaded into `outDir`. */
async function frameColours(outDir: string): Promise<ReturnType<typeof cellColours>> {
  const png = (await readdir(outDir)).find((n) => n.endsWith('.png'));
  if (!png) throw new Error(`no frame in ${outDir}`);
  return cellColours(path.join(outDir, png));
}

/** The submission is uploading and has sent some, not all, of what it has to send. */
async function midUpload(f: Farm, id: string): Promise<Submission> {
  return waitUntil(
    `submission ${id} to be part-way through its upload`,
    async () => {
      const s = await submissionOf(f, id);
      if (s.step === 'failed' || s.step === 'done')
        throw new Error(`the submission ended before its upload was part-way: ${JSON.stringify(s.error)}`);
      return s.step === 'uploading' &&
        s.upload &&
        s.upload.bytesDone > 0 &&
        s.upload.bytesDone < s.upload.bytesTotal / 2
        ? s
        : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 50 },
  );
}

const absRed = (p: PackProject) => path.join(p.root, 'assets', 'abs_red.png');
const wood = (p: PackProject) => path.join(p.proj, 'textures', 'wood.png');

function expectPackChanged(s: Submission, file: string): void {
  expect(s.step).toBe('failed');
  expect(s.error?.name, JSON.stringify(s.error)).toBe('PACK_CHANGED');
  expect(s.error?.message).toContain(file);
  expect(s.error?.message).toMatch(/pack again/);
  expect(s.error?.message).not.toMatch(/service URL/);
}

describe('a pack is a snapshot', () => {
  it('renders the packed texture after the artist renamed it between pack and submit', async () => {
    const project = await buildPackProject(path.join(work, 'renamed'));
    farm = await startFarm('renamed');
    const packed = await pack(farm, project.main);
    expect(packed.files.some((f) => f.source === absRed(project))).toBe(true);
    // A sync tool tidies the folder: the texture outside the project gets another name.
    await rename(absRed(project), path.join(project.root, 'assets', 'wall texture.png'));
    const outDir = path.join(work, 'renamed-out');
    const s = await settle(
      farm,
      await startSubmission(farm, { packId: packed.packId, settings: { frames: ['1'] }, outDir }),
    );
    expect(s.error).toBeNull();
    expect(s.step).toBe('done');
    expect(mismatches(await frameColours(outDir))).toEqual({});
  }, 300_000);

  it(
    'fails at once naming a texture written in place after packing, says to pack again, and packing again ' +
      'renders it as repainted',
    async () => {
      const project = await buildPackProject(path.join(work, 'in-place'));
      farm = await startFarm('in-place');
      const packed = await pack(farm, project.main);
      // Repainted and saved over the same file: new bytes under the packed path, same inode.
      await writeFile(wood(project), await readFile(absRed(project)));
      const s = await settle(farm, await startSubmission(farm, { packId: packed.packId, settings: { frames: ['1'] } }));
      expectPackChanged(s, wood(project));
      expect(s.jobId).toBeNull();
      expect(s.upload?.retries ?? 0).toBe(0);
      // The add-on shows "NAME: message"; the tray, which has no job to report on, notifies it.
      const note = submissionNotification(s);
      expect(note?.body).toContain(wood(project));
      expect(note?.body).toMatch(/pack again/);
      // The stale pack is never sent: submitting it again says to pack again.
      const resent = await settle(
        farm,
        await startSubmission(farm, { packId: packed.packId, settings: { frames: ['1'] } }),
      );
      expect(resent.step).toBe('failed');
      expect(resent.error?.name, JSON.stringify(resent.error)).toBe('DAEMON_NOT_FOUND');
      expect(resent.error?.message).toMatch(/pack the project again/);
      // Packing again takes a fresh snapshot: the frame shows the texture as repainted (wood now red).
      const repacked = await pack(farm, project.main);
      expect(repacked.packId).not.toBe(packed.packId);
      const woodBefore = packed.files.find((f) => f.source === wood(project));
      const woodNow = repacked.files.find((f) => f.source === wood(project));
      expect(woodNow?.sha256).not.toBe(woodBefore?.sha256);
      const outDir = path.join(work, 'in-place-out');
      const done = await settle(
        farm,
        await startSubmission(farm, { packId: repacked.packId, settings: { frames: ['1'] }, outDir }),
      );
      expect(done.error).toBeNull();
      expect(done.step).toBe('done');
      const colours = await frameColours(outDir);
      expect(Object.keys(mismatches(colours))).toEqual(['wood']);
      const red = CELLS['absRed']?.rgb ?? [];
      expect(
        colours['wood']?.every((c, i) => Math.abs(c - (red[i] ?? -99)) <= 3),
        JSON.stringify(colours),
      ).toBe(true);
    },
    400_000,
  );

  it(
    'names a moved texture the daemon could not link (another filesystem) and says to pack again, never the ' +
      'service URL',
    async (ctx) => {
      const shm = '/dev/shm';
      const other = await stat(shm).catch(() => null);
      if (!other?.isDirectory() || other.dev === (await stat(work)).dev) {
        if (process.env.CI === 'true') throw new Error(`${shm} is needed on another filesystem than ${work}`);
        console.warn(`skipped: ${shm} is not another filesystem than ${work}, so every file can be linked`);
        return ctx.skip();
      }
      const project = await buildPackProject(path.join(work, 'elsewhere'));
      const daemonWork = await mkdtemp(path.join(shm, 'rb-pack-snapshot-'));
      try {
        farm = await startFarm('elsewhere', { daemonWork });
        const packed = await pack(farm, project.main);
        await rename(absRed(project), path.join(project.root, 'assets', 'wall texture.png'));
        const s = await settle(
          farm,
          await startSubmission(farm, { packId: packed.packId, settings: { frames: ['1'] } }),
        );
        expectPackChanged(s, absRed(project));
        expect(s.error?.message).toMatch(/moved or deleted/);
      } finally {
        await farm?.close();
        farm = undefined;
        await rm(daemonWork, { recursive: true, force: true });
      }
    },
    300_000,
  );
});

describe('the artist keeps working during a slow upload', () => {
  const why = throttledLinkUnavailable();
  if (why && process.env.CI === 'true') throw new Error(why);
  if (why) console.warn(`skipped: ${why}`);

  /** The pack fixture with a 1.5 MB scene and its edited version; a farm behind a 2 Mbit/s link, parts of 64 KiB. */
  async function slowFarm(name: string): Promise<PackProject> {
    const project = await buildPackProject(path.join(work, name));
    const res = await runBlender({
      binary: process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender',
      pythonScript: SAVES_SCRIPT,
      scriptArgs: [project.root],
      timeoutMs: 120_000,
    });
    if (res.exitCode !== 0)
      throw new Error(`building the saved scene failed (exit ${res.exitCode}):\n${res.lastLines.join('\n')}`);
    farm = await startFarm(name, { link: await startThrottledLink({ rateKbit: 2000 }), partSize: 64 * 1024 });
    return project;
  }

  it.skipIf(why !== undefined)(
    'renders the scene as it was when Render was pressed, though the .blend and a texture were saved again meanwhile',
    async () => {
      const project = await slowFarm('saved');
      const f = farm as Farm;
      const outDir = path.join(work, 'saved-out');
      const id = await startSubmission(f, { pack: { path: project.main }, settings: { frames: ['1'] }, outDir });
      await midUpload(f, id);
      // Saved as Blender saves (a new file renamed over the old): the AbsRed cell now shows wood.png.
      await rename(path.join(project.proj, 'scenes', 'main.saved.blend'), project.main);
      // wood.png repainted red by an editor that saves the same way.
      await writeFile(`${wood(project)}.tmp`, await readFile(absRed(project)));
      await rename(`${wood(project)}.tmp`, wood(project));
      expect((await submissionOf(f, id)).step).toBe('uploading');
      const s = await settle(f, id);
      expect(s.error).toBeNull();
      expect(s.step).toBe('done');
      // The AbsRed cell is red (the scene as packed), wood blue (the texture as packed).
      expect(mismatches(await frameColours(outDir))).toEqual({});
    },
    400_000,
  );

  it.skipIf(why !== undefined)(
    'a texture repainted in place during the upload: the packed texture renders, or the submission names it ' +
      'and says to pack again',
    async () => {
      const project = await slowFarm('repainted');
      const f = farm as Farm;
      const outDir = path.join(work, 'repainted-out');
      const id = await startSubmission(f, { pack: { path: project.main }, settings: { frames: ['1'] }, outDir });
      await midUpload(f, id);
      // wood.png is sent after the scene's many parts; written in place, under the pack's link too.
      await writeFile(wood(project), await readFile(absRed(project)));
      const s = await settle(f, id);
      if (s.step === 'failed') {
        expectPackChanged(s, wood(project));
      } else {
        expect(s.step).toBe('done');
        expect(mismatches(await frameColours(outDir))).toEqual({});
      }
    },
    400_000,
  );
});
