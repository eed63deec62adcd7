// The add-on's recent-jobs buttons and its save-before-submit rule against every real part, on
// every build of the Blender matrix: a reference service with a worker (whose farm has that build
// too: a file saved by 5.2 opens in no older Blender), the bridge daemon, and headless Blender
// running the installed add-on (test/host-addon/drivers/jobs.py). Download fetches a job rendered with
// downloading off, then again after the test deleted one frame and left another half-written (the
// complete one is skipped, the rest fetched); Open folder hands the row's folder to the OS opener;
// a dirty file is saved before packing (by the artist's Blender, so the farm must open that
// version), a never saved one is refused.
import { chmod, copyFile, mkdir, readdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import { buildFixture } from '../helpers/fixtures.js';
import { daemonCall } from '../daemon/harness.js';
import { runDriver, startAddonStack, type AddonStack, type BlenderHome } from './blender-addon.js';

interface Row {
  status: string;
  label: string;
  outDir: string | null;
  download: string | null;
  files: number | null;
  filesDone: number | null;
  skipped: number;
}
interface Op {
  result: string[];
  error?: string;
}
interface JobsResult {
  connection_error: string | null;
  before?: Row;
  download?: Op;
  notice?: [string, string];
  job?: Row;
  files?: string[];
  open?: Op;
  opened?: string;
  open_missing?: Op;
  dirty_before?: boolean;
  mtime_before?: number;
  mtime_after?: number;
  objects_on_disk?: string[];
  ops?: Op;
  activity?: { step: string; error: string | null; jobId: string | null } | string | null;
  filepath?: string;
  check?: Op;
  render_invoke?: Op;
  busy?: boolean;
}

describe.each(usableBuilds('add-on recent jobs and saving'))('add-on on Blender $minor', (build) => {
  let daemon: RunningBridgeDaemon;
  let work: string;
  let home: BlenderHome;
  let zip: string;
  let stack: AddonStack | undefined;

  beforeAll(async () => {
    stack = await startAddonStack('rb-addon-jobs-', build);
    ({ work, home, daemon, zip } = stack);
  }, 180_000);
  afterAll(() => stack?.close());

  const call = (method: string, p: string, body?: unknown) => daemonCall(daemon)(method, p, body);

  async function copyOfBasic(folder: string): Promise<string> {
    const dir = path.join(work, folder);
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'basic.blend');
    await copyFile(await buildFixture('basic'), file);
    return file;
  }

  async function jobs(
    name: string,
    args: string[],
    opts: { file?: string; env?: Record<string, string> } = {},
  ): Promise<JobsResult> {
    const result = path.join(work, `${name}.json`);
    return runDriver<JobsResult>({
      name: 'jobs',
      home,
      file: opts.file,
      env: opts.env,
      args: [zip, args[0]!, result, ...args.slice(1)],
      result,
      timeoutMs: 240_000,
    });
  }

  /** Renders frames 1-3 through the daemon with downloading off (as `renderbridge submit` can); the job id. */
  async function renderWithoutDownload(): Promise<string> {
    const file = await copyOfBasic('no-download');
    const res = await call('POST', '/submissions', {
      pack: { path: file },
      settings: { frames: ['1-3'], viewLayer: 'Main' },
      download: false,
    });
    expect(res.status, res.text).toBe(202);
    const id = (res.json as { id: string }).id;
    for (const deadline = Date.now() + 200_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      const sub = (await call('GET', `/submissions/${id}`)).json as {
        step: string;
        jobId: string | null;
        outDir: string | null;
        error: unknown;
      };
      if (sub.step === 'failed') throw new Error(`submission failed: ${JSON.stringify(sub.error)}`);
      if (sub.step === 'done') {
        expect(sub.outDir).toBeNull();
        return sub.jobId!;
      }
    }
    throw new Error('the render did not end in time');
  }

  describe('recent jobs: Download and Open folder', () => {
    let jobId: string;
    let folder: string;
    const downloads = () => path.join(work, 'artist-downloads');

    it('Download on a job rendered with downloading off puts its 3 frames in the download folder', async () => {
      jobId = await renderWithoutDownload();
      const before = (await call('GET', `/jobs/${jobId}`)).json as { download: unknown };
      expect(before.download).toBeNull();
      const got = await jobs('download-1', ['download', jobId, downloads()]);
      expect(got.connection_error).toBeNull();
      expect(got.before).toMatchObject({ status: 'completed', download: null });
      expect(got.download).toEqual({ result: ['FINISHED'] });
      expect(got.notice?.[0]).toBe('INFO');
      folder = got.job!.outDir!;
      // The add-on chose <download folder>/<scene name>-<job id start> for a job the daemon has no folder for.
      expect(path.dirname(folder)).toBe(downloads());
      expect(path.basename(folder)).toContain(jobId.slice(0, 8));
      expect(got.job).toMatchObject({ status: 'completed', download: 'done', files: 3, filesDone: 3, skipped: 0 });
      expect(got.job?.label).toMatch(/, downloaded$/);
      const pngs = got.files!.filter((f) => f.endsWith('.png'));
      expect(pngs).toHaveLength(3);
      for (const f of pngs) expect((await readFile(path.join(folder, f))).subarray(1, 4).toString()).toBe('PNG');
    }, 300_000);

    it(
      'Download again after a frame was deleted and another left half-written: skips the complete one, ' +
        'restores the rest',
      async () => {
        const names = (await readdir(folder, { recursive: true })).filter((f) => f.endsWith('.png')).sort();
        expect(names).toHaveLength(3);
        const [gone, half, kept] = names.map((n) => path.join(folder, n)) as [string, string, string];
        const [goneBytes, halfBytes] = await Promise.all([readFile(gone), readFile(half)]);
        const keptMtime = (await stat(kept)).mtimeMs;
        await rm(gone);
        // A download cut off half way: the daemon writes to NAME.part and renames when complete.
        await rename(half, `${half}.part`);
        await truncate(`${half}.part`, Math.floor(halfBytes.length / 2));
        await new Promise((r) => setTimeout(r, 20));

        const got = await jobs('download-2', ['download', jobId, downloads()]);
        expect(got.before?.download).toBe('done');
        expect(got.download).toEqual({ result: ['FINISHED'] });
        expect(got.job).toMatchObject({
          status: 'completed',
          download: 'done',
          outDir: folder,
          files: 3,
          filesDone: 3,
          skipped: 1,
        });
        expect(got.files!.filter((f) => f.endsWith('.png'))).toHaveLength(3);
        expect(got.files!.some((f) => f.endsWith('.part'))).toBe(false);
        expect(await readFile(gone)).toEqual(goneBytes);
        expect(await readFile(half)).toEqual(halfBytes);
        expect((await stat(kept)).mtimeMs).toBe(keptMtime);
      },
      300_000,
    );

    it("Open folder hands the job's output folder to the OS opener; a missing folder is refused", async () => {
      // No desktop session exists here, so a stand-in for the desktop's opener (xdg-open) comes first
      // on PATH: it only writes the folder it was asked to open to a file.
      const bin = path.join(work, 'stand-in-bin');
      await mkdir(bin, { recursive: true });
      const record = path.join(work, 'xdg-open-got.txt');
      await writeFile(
        path.join(bin, 'xdg-open'),
        `#!/bin/sh\nprintf '%s' "$1" > '${record}.tmp' && mv '${record}.tmp' '${record}'\n`,
      );
      await chmod(path.join(bin, 'xdg-open'), 0o755);
      const got = await jobs('open-folder', ['download', jobId, downloads(), record], {
        env: { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
      });
      expect(got.job).toMatchObject({ download: 'done', skipped: 3, outDir: folder });
      expect(got.open).toEqual({ result: ['FINISHED'] });
      expect(got.opened).toBe(folder);
      const missing = path.join(downloads(), 'never-downloaded');
      expect(got.open_missing?.result).toEqual(['CANCELLED']);
      expect(got.open_missing?.error).toContain(`The folder ${missing} does not exist (yet): download the job first.`);
    }, 300_000);
  });

  describe('save before submit', () => {
    it('Check saves a dirty file before packing: the farm analyses the edit', async () => {
      const file = await copyOfBasic('dirty');
      const got = await jobs('save-dirty', ['save-dirty'], { file });
      expect(got.dirty_before).toBe(true);
      expect(got.ops).toEqual({ result: ['FINISHED'] });
      // (Background Blender keeps is_dirty set after a save, so the file itself is what is checked.)
      expect(got.mtime_after).toBeGreaterThan(got.mtime_before!);
      expect(got.objects_on_disk).toContain('CamSaved');
      const act = got.activity as { step: string; error: string | null; jobId: string };
      expect(act.error).toBeNull();
      expect(act.step).toBe('done');
      const job = (
        (await call('GET', `/jobs/${act.jobId}`)).json as {
          job: { analysis: { output: { sceneCameras: { objectName: string }[] } } };
        }
      ).job;
      expect(job.analysis.output.sceneCameras.map((c) => c.objectName)).toContain('CamSaved');
    }, 300_000);

    it('a never saved file is refused with a clear message, and nothing reaches the daemon', async () => {
      const before = ((await call('GET', '/submissions')).json as { submissions: unknown[] }).submissions.length;
      const got = await jobs('unsaved', ['unsaved']);
      expect(got.filepath).toBe('');
      const message = 'The file has never been saved: save it (File > Save As), then try again.';
      expect(got.check).toEqual({ result: ['CANCELLED'], error: expect.stringContaining(message) as string });
      // Clicking the button (invoke) in background Blender, where no Save As dialog can open.
      expect(got.render_invoke).toEqual({ result: ['CANCELLED'], error: expect.stringContaining(message) as string });
      expect(got.activity).toBeNull();
      expect(got.busy).toBe(false);
      expect(((await call('GET', '/submissions')).json as { submissions: unknown[] }).submissions).toHaveLength(before);
    }, 120_000);
  });
});
