// Downloads of a job's outputs into its folder. The first part renders through the real reference
// service (worker + Blender) and downloads what it made; the second uses a small real HTTP server
// written in this suite (test/daemon/crafted-server.ts) for answers the reference service never
// gives: hostile names, an expired URL, transfers cut short.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import type { DaemonEvent } from '../../shared/daemon/api.js';
import { downloadJobOutputs } from '../../daemon/download/job.js';
import { createDownloads } from '../../daemon/download/downloads.js';
import { buildFixture } from '../helpers/fixtures.js';
import { fetchBytes, filesUnder, startE2E, submit, tinyRender, validationOutcome, type E2E } from '../helpers/e2e.js';
import { answerWith, frameEntry, startCraftedServer, type CraftedServer } from './crafted-server.js';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-dl-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('outputs of a real render', () => {
  let e2e: E2E;
  let jobId: string;
  beforeAll(async () => {
    e2e = await startE2E();
    jobId = await submit(e2e.client, await buildFixture('compositor'));
    expect((await validationOutcome(e2e.client, jobId)).status).toBe('validated');
    await e2e.client.renderJob(jobId, tinyRender('1-2', { videoOutput: true }));
    await e2e.client.waitForStatus(jobId, ['completed'], { intervalMs: 200, timeoutMs: 180_000 });
  }, 240_000);
  afterAll(async () => {
    await e2e?.svc.close();
  });

  it('recreates the compositor relativePath folders, saves frames and the video, then skips and resumes', async () => {
    const outDir = path.join(scratch, 'real');
    const events: DaemonEvent[] = [];
    const downloads = createDownloads({
      clients: { client: async () => e2e.client, apiKeySource: async () => 'env' },
      events: { publish: (e) => events.push(e) },
    });
    downloads.start(jobId, outDir);
    const state = await downloads.settled(jobId);
    expect(state).toMatchObject({ state: 'done', files: 7, filesDone: 7, skipped: 0, error: null });
    const files = await filesUnder(outDir);
    expect(files.filter((f) => !f.endsWith('.mp4'))).toEqual(
      [
        'FileOut/beauty_0001.png',
        'FileOut/beauty_0002.png',
        'FileOut/mask0001.png',
        'FileOut/mask0002.png',
        'f_0001.png',
        'f_0002.png',
      ].sort(),
    );
    expect(files.filter((f) => f.endsWith('.mp4'))).toHaveLength(1);
    // The bytes are the service's.
    const answer = await e2e.client.getDownloads(jobId);
    const beauty = answer.compositeNodeOutputs!.find((c) => c.relativePath === 'FileOut/beauty_0002.png')!;
    expect(await readFile(path.join(outDir, 'FileOut/beauty_0002.png'))).toEqual(await fetchBytes(beauty.url));
    const total = (await Promise.all(files.map((f) => stat(path.join(outDir, f))))).reduce((a, s) => a + s.size, 0);
    expect(state.bytes).toBe(total);
    expect(state.bytesDone).toBe(total);
    // Events: pending first, done last, counters never going back.
    const states = events.filter((e) => e.event === 'download').map((e) => e.data as typeof state);
    expect(states[0]!.state).toBe('pending');
    expect(states.at(-1)).toEqual(state);
    for (let i = 1; i < states.length; i++)
      expect(states[i]!.filesDone).toBeGreaterThanOrEqual(states[i - 1]!.filesDone);

    // A second run keeps every complete file; a file cut in half is completed from its .part.
    const frame = path.join(outDir, 'f_0002.png');
    const original = await readFile(frame);
    await rm(frame);
    await writeFile(`${frame}.part`, original.subarray(0, Math.floor(original.length / 2)));
    const again = await downloadJobOutputs(e2e.client, jobId, outDir);
    expect(again.state).toMatchObject({ state: 'done', files: 7, filesDone: 7, skipped: 6 });
    expect(again.files.find((f) => f.path === 'f_0002.png')?.status).toBe('resumed');
    expect(await readFile(frame)).toEqual(original);
    expect(existsSync(`${frame}.part`)).toBe(false);
  }, 120_000);
});

describe('answers the reference service never gives (crafted server)', () => {
  let srv: CraftedServer;
  let client: RenderJobClient;
  beforeAll(async () => {
    srv = await startCraftedServer();
    client = new RenderJobClient({ baseUrl: srv.baseUrl, apiKey: 'rb_live_test', maxRetries: 0 });
  });
  afterAll(async () => {
    await srv?.close();
  });
  const fast = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 };
  const fileGets = (key: string) => srv.seen.filter((r) => r.path === `/files/${encodeURIComponent(key)}`);

  it('refuses names that leave the folder, writes nothing outside it, and sanitises the rest', async () => {
    const sandbox = await mkdtemp(path.join(scratch, 'hostile-'));
    const outDir = path.join(sandbox, 'out');
    const outside = path.join(sandbox, 'outside');
    await mkdir(outside);
    await mkdir(outDir);
    await symlink(outside, path.join(outDir, 'link'));
    const absolute = path.join(sandbox, 'absolute.png');
    const names = [
      '../evil.png',
      absolute,
      'a/../../b.png',
      'C:\\win.png',
      '..\\back.png',
      'link/through.png',
      'sub/dir/ok.png',
      'con.png',
      'we?ird.png',
      'we*ird.png',
      'bell\u0007.png',
    ];
    names.forEach((n, i) => srv.files.set(`f${i}`, { bytes: Buffer.from(`file ${i}`) }));
    srv.downloads = (_v, url) =>
      answerWith(
        names.slice(7).map((n, i) => frameEntry(url(`f${i + 7}`), n)),
        names.slice(0, 7).map((n, i) => frameEntry(url(`f${i}`), path.basename(n), n)),
      );

    const report = await downloadJobOutputs(client, srv.jobId, outDir, fast);
    expect(report.refused.map((r) => r.name).sort()).toEqual(names.slice(0, 6).sort());
    expect(report.state.refused.map((r) => r.name).sort()).toEqual(names.slice(0, 6).sort());
    expect(report.state.state).toBe('failed');
    expect(report.state.error?.name).toBe('DOWNLOAD_INCOMPLETE');
    expect(
      report.state.error?.details
        .filter((d) => d.code === 'OUTPUT_PATH_REFUSED')
        .map((d) => d.path[0])
        .sort(),
    ).toEqual(names.slice(0, 6).sort());
    // Only the safe files, under outDir; nothing beside it, through the link, or at the absolute path.
    expect(await filesUnder(outDir)).toEqual(['_con.png', 'bell_.png', 'sub/dir/ok.png', 'we_ird-2.png', 'we_ird.png']);
    // Two names that sanitise alike keep both files.
    expect(
      [
        await readFile(path.join(outDir, 'we_ird.png'), 'utf8'),
        await readFile(path.join(outDir, 'we_ird-2.png'), 'utf8'),
      ].sort(),
    ).toEqual(['file 8', 'file 9']);
    expect(await filesUnder(outside)).toEqual([]);
    expect((await filesUnder(sandbox)).filter((f) => !f.startsWith('out/'))).toEqual([]);
    expect(existsSync(absolute)).toBe(false);
    expect(existsSync(path.join(scratch, 'b.png'))).toBe(false);
    expect(await readFile(path.join(outDir, 'sub/dir/ok.png'), 'utf8')).toBe('file 6');
    // The signature in the URLs never reaches the error shown to the user.
    expect(JSON.stringify(report.state.error)).not.toContain('secret-signature');
  });

  it('completes a half-written .part with a Range request, and skips a complete file without a GET', async () => {
    const outDir = await mkdtemp(path.join(scratch, 'resume-'));
    const bytes = randomBytes(100_000);
    srv.files.set('half', { bytes });
    srv.files.set('whole', { bytes: randomBytes(5000) });
    srv.downloads = (_v, url) =>
      answerWith([frameEntry(url('half'), 'f_0001.png'), frameEntry(url('whole'), 'f_0002.png')]);
    await writeFile(path.join(outDir, 'f_0001.png.part'), bytes.subarray(0, 40_000));
    await writeFile(path.join(outDir, 'f_0002.png'), srv.files.get('whole')!.bytes);

    const report = await downloadJobOutputs(client, srv.jobId, outDir, fast);
    expect(report.state).toMatchObject({
      state: 'done',
      files: 2,
      filesDone: 2,
      skipped: 1,
      bytes: 105_000,
      bytesDone: 105_000,
    });
    expect(fileGets('half').map((r) => [r.method, r.range])).toEqual([['GET', 'bytes=40000-']]);
    expect(fileGets('whole').map((r) => r.method)).toEqual(['HEAD']);
    expect(await readFile(path.join(outDir, 'f_0001.png'))).toEqual(bytes);
    expect(await filesUnder(outDir)).toEqual(['f_0001.png', 'f_0002.png']);
  });

  it('replaces a local copy whose size differs from the server file', async () => {
    const outDir = await mkdtemp(path.join(scratch, 'stale-'));
    srv.files.set('stale', { bytes: randomBytes(3000) });
    srv.downloads = (_v, url) => answerWith([frameEntry(url('stale'), 'f_0001.png')]);
    await writeFile(path.join(outDir, 'f_0001.png'), randomBytes(2999));
    const report = await downloadJobOutputs(client, srv.jobId, outDir, fast);
    expect(report.state).toMatchObject({ state: 'done', skipped: 0 });
    expect(fileGets('stale').map((r) => r.method)).toEqual(['HEAD', 'GET']);
    expect(await readFile(path.join(outDir, 'f_0001.png'))).toEqual(srv.files.get('stale')!.bytes);
  });

  it('never puts a cut-off transfer in place, resumes each retry with Range, and finishes on a later run', async () => {
    const outDir = await mkdtemp(path.join(scratch, 'cut-'));
    const bytes = randomBytes(1000);
    srv.files.set('cut', { bytes, cutAfter: 250 });
    srv.downloads = (_v, url) => answerWith([frameEntry(url('cut'), 'f_0001.png')]);
    const report = await downloadJobOutputs(client, srv.jobId, outDir, fast);
    expect(report.state.state).toBe('failed');
    expect(report.failed.map((f) => [f.path, f.error.name])).toEqual([['f_0001.png', 'NETWORK_ERROR']]);
    expect(fileGets('cut').map((r) => r.range)).toEqual([undefined, 'bytes=250-', 'bytes=500-']);
    expect(existsSync(path.join(outDir, 'f_0001.png'))).toBe(false);
    expect((await stat(path.join(outDir, 'f_0001.png.part'))).size).toBe(750);

    srv.files.set('cut', { bytes });
    const later = await downloadJobOutputs(client, srv.jobId, outDir, fast);
    expect(later.state.state).toBe('done');
    expect(fileGets('cut').at(-1)?.range).toBe('bytes=750-');
    expect(await readFile(path.join(outDir, 'f_0001.png'))).toEqual(bytes);
  });

  it('asks for fresh URLs when a signed URL has expired', async () => {
    const outDir = await mkdtemp(path.join(scratch, 'expired-'));
    const file = { bytes: Buffer.from('fresh bytes'), expiredVersion: '' };
    srv.files.set('exp', file);
    // The URLs of the first answer in this test have expired; later answers' work.
    let first: number | undefined;
    let asked = 0;
    srv.downloads = (v, url) => {
      first ??= v;
      file.expiredVersion = String(first);
      asked = v;
      return answerWith([frameEntry(url('exp'), 'f_0001.png')]);
    };
    const before = srv.seen.filter((r) => r.path.endsWith('/downloads')).length;
    const report = await downloadJobOutputs(client, srv.jobId, outDir, fast);
    expect(report.state.state).toBe('done');
    expect(srv.seen.filter((r) => r.path.endsWith('/downloads')).length - before).toBe(2);
    expect(asked).toBe(first! + 1);
    expect(fileGets('exp').map((r) => r.method)).toEqual(['GET', 'GET']);
    expect(await readFile(path.join(outDir, 'f_0001.png'), 'utf8')).toBe('fresh bytes');
  });
});
