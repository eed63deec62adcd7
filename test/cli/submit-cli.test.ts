// `renderbridge submit` and `renderbridge jobs` as a pipeline script runs them: a real process,
// the real reference service with a worker, real Blender tracing and rendering. Exit codes and
// --json output are what scripts branch on, so those are what is checked.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { RenderJobClient } from '../../shared/client/client.js';
import { waitUntil } from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';
import { buildPackProject } from '../helpers/pack-fixture.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let home: string;

beforeAll(async () => {
  svc = await startTestService({ workers: 1 });
  home = await mkdtemp(path.join(tmpdir(), 'rb-cli-home-'));
}, 120_000);
afterAll(() => svc.close());

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', ...args], {
    env: {
      ...process.env,
      HOME: home,
      XDG_STATE_HOME: path.join(home, 'state'),
      RENDERBRIDGE_DOWNLOADS: path.join(home, 'outputs'),
      RENDERBRIDGE_SERVICE_URL: svc.baseUrl,
      RENDERBRIDGE_API_KEY: svc.apiKey,
      // No session bus: the OS keychain is unreachable, so the key comes from the environment.
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

async function pngsUnder(dir: string): Promise<string[]> {
  const all = await readdir(dir, { recursive: true });
  return all.filter((f) => f.endsWith('.png')).sort();
}

describe('renderbridge submit', () => {
  let jobId = '';
  let out = '';

  it('packs a .blend with the files Blender finds, renders it, leaves the frame on disk (exit 0, --json)', async () => {
    const project = await buildPackProject(await mkdtemp(path.join(tmpdir(), 'rb-cli-proj-')));
    out = path.join(home, 'shot');
    const r = await cli(['submit', project.main, '--frames', '1', '--out', out, '--json']);
    expect(r.code, r.stderr).toBe(EXIT.OK);
    const result = JSON.parse(r.stdout) as {
      submission: { step: string; jobId: string; outDir: string };
      pack: { missing: { path: string }[]; fileCount: number };
      exitCode: number;
    };
    expect(result.submission.step).toBe('done');
    expect(result.submission.outDir).toBe(out);
    expect(result.exitCode).toBe(0);
    // The one missing texture is reported, never silently dropped; the rest were packed.
    expect(result.pack.missing.map((m) => m.path)).toEqual(['//../textures/missing.png']);
    expect(result.pack.fileCount).toBeGreaterThan(10);
    jobId = result.submission.jobId;
    const pngs = await pngsUnder(out);
    expect(pngs.length).toBe(1);
    expect((await stat(path.join(out, pngs[0]!))).size).toBeGreaterThan(0);
  }, 240_000);

  it('lists, shows and downloads the job again, skipping complete files', async () => {
    expect(jobId).not.toBe('');
    const list = await cli(['jobs', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(
      (JSON.parse(list.stdout) as { jobs: { id: string; status: string }[] }).jobs.find((j) => j.id === jobId)?.status,
    ).toBe('completed');

    const show = await cli(['jobs', 'show', jobId]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(jobId);
    expect(show.stdout).toMatch(/completed/);
    expect(show.stdout).toMatch(/frames: 1\/1 done/);

    const again = await cli(['jobs', 'download', jobId, '--out', out, '--json']);
    expect(again.code, again.stderr).toBe(0);
    const state = JSON.parse(again.stdout) as { state: string; skipped: number; filesDone: number };
    expect(state.state).toBe('done');
    expect(state.skipped).toBeGreaterThanOrEqual(1);

    const fresh = path.join(home, 'fresh');
    const dl = await cli(['jobs', 'download', jobId, '--out', fresh]);
    expect(dl.code, dl.stderr).toBe(0);
    expect(await pngsUnder(fresh)).toEqual(await pngsUnder(out));
  }, 60_000);

  it('refuses to cancel a finished job with the service message (exit 1)', async () => {
    const r = await cli(['jobs', 'cancel', jobId]);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toMatch(/CANCEL_NOT_ALLOWED \(409\)/);
  });

  it('ends with exit code 3 and the reason when validation fails', async () => {
    const r = await cli(['submit', await buildFixture('odd'), '--no-download']);
    expect(r.code, r.stdout + r.stderr).toBe(EXIT.VALIDATION_FAILED);
    expect(r.stderr).toMatch(/validating failed \(job [0-9a-f-]{36}\)/);
    expect(r.stderr).toMatch(/camera/i);
  }, 180_000);

  it("ends with exit code 4 and Blender's reason when the render fails", async () => {
    // Validation sees the camera; Blender, at render time, cannot resolve it (its library shadows it).
    const r = await cli(['submit', await buildFixture('shadowed-camera'), '--frames', '1', '--no-download']);
    expect(r.code, r.stdout + r.stderr).toBe(EXIT.RENDER_FAILED);
    expect(r.stderr).toMatch(/rendering failed \(job [0-9a-f-]{36}\): BLENDER_FAILED: .*camera 'Shot' not found/);
  }, 240_000);

  it('ends with exit code 5 and says to submit again when the job is canceled while it renders', async () => {
    // Long enough to be caught rendering: many frames at many samples.
    const running = cli([
      'submit',
      await buildFixture('basic'),
      '--frames',
      '1-250',
      '--samples',
      '4096',
      '--no-download',
    ]);
    const api = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    const rendering = await waitUntil(
      'the job to render',
      async () => (await api.listProgress()).find((p) => p.status === 'rendering')?.jobId,
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    const cancel = await cli(['jobs', 'cancel', rendering]);
    expect(cancel.code, cancel.stderr).toBe(EXIT.OK);
    const r = await running;
    expect(r.code, r.stdout + r.stderr).toBe(EXIT.CANCELED);
    expect(r.stderr).toContain(
      `rendering failed (job ${rendering}): JOB_CANCELED: Job ${rendering} was canceled: submit the project ` +
        `again to render it.`,
    );
  }, 300_000);

  it('ends with exit code 8 and says to choose another folder when the output folder cannot be made', async () => {
    // A file where the outputs folder should be: rendered, but nowhere to put the frames.
    const blocked = path.join(home, 'not-a-folder');
    await writeFile(blocked, 'a file');
    const r = await cli(['submit', await buildFixture('basic'), '--frames', '1', '--out', blocked]);
    expect(r.code, r.stdout + r.stderr).toBe(EXIT.DOWNLOAD_FAILED);
    expect(r.stderr).toMatch(
      new RegExp(
        `failed \\(job ([0-9a-f-]{36})\\): DOWNLOAD_FAILED: The output folder "${blocked}" cannot be made ` +
          `\\(a file is in the way\\): choose another folder and download the outputs again \\(renderbridge ` +
          `jobs download \\1 --out FOLDER\\)\\.`,
      ),
    );
  }, 240_000);

  it('ends with exit code 1 naming the path when the project does not exist', async () => {
    const missing = path.join(home, 'nowhere', 'shot.blend');
    const r = await cli(['submit', missing]);
    expect(r.code, r.stdout + r.stderr).toBe(EXIT.FAILURE);
    expect(r.stderr).toContain(`"${missing}" does not exist; check the path`);
  });

  it('says what to do without an API key (exit 7) or a reachable service (exit 6)', async () => {
    const basic = await buildFixture('basic');
    const noKey = await cli(['submit', basic], { RENDERBRIDGE_API_KEY: undefined });
    expect(noKey.code).toBe(EXIT.AUTH);
    expect(noKey.stderr).toMatch(/RENDERBRIDGE_API_KEY/);

    const wrongKey = await cli(['jobs', 'list'], { RENDERBRIDGE_API_KEY: `rb_live_${'x'.repeat(43)}` });
    expect(wrongKey.code).toBe(EXIT.AUTH);
    expect(wrongKey.stderr).toMatch(/UNAUTHORIZED/);
    expect(wrongKey.stderr).not.toContain('x'.repeat(43));

    const down = await cli(['jobs', 'list', '--service', 'http://127.0.0.1:9/api/external/v1']);
    expect(down.code).toBe(EXIT.SERVICE_UNREACHABLE);
    expect(down.stderr).toMatch(/Is the service running/);
  }, 120_000);

  it('rejects a bad --status as a usage error (exit 2)', async () => {
    const r = await cli(['jobs', 'list', '--status', 'nonsense']);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toMatch(/--status must be one of/);
  });
});
