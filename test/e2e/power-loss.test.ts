// A machine that lost power mid-render, through the public API with real Blender: frame files
// that were saved and moved into the job's out/ folder can come back empty or full of zeros (the
// filesystem had not written their bytes yet). The worker that starts next must not count them as
// finished, nor publish them: they are rendered again, and one damaged after the restart began is
// refused at finalize with an error that says to requeue, which renders only that frame. Warm and
// chunked mode alike.
import { mkdtemp, open, rm, truncate, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../helpers/fixtures.js';
import { blenderProcesses, framesBegun, startE2E, stoppedPartway, waitUntil, type E2E } from '../helpers/e2e.js';

const PNG_HEAD = '89504e470d0a1a0a';
const PNG_END = '0000000049454e44ae426082';
const ALL = Array.from({ length: 12 }, (_, i) => i + 1);
const frameFile = (n: number) => `f_${String(n).padStart(4, '0')}.png`;

/** What a power loss leaves of a saved file: its length with zeros, or nothing at all; dated before the restart. */
async function damage(file: string, how: 'zeros' | 'empty'): Promise<void> {
  if (how === 'empty') await truncate(file, 0);
  else {
    const fh = await open(file, 'r+');
    const { size } = await fh.stat();
    await fh.write(Buffer.alloc(size), 0, size, 0);
    await fh.close();
  }
  const past = new Date(Date.now() - 3600_000);
  await utimes(file, past, past);
}

/** Every delivered frame is a whole PNG: downloads fetched and checked byte by byte at both ends. */
async function expectWholePngs(e2e: E2E, jobId: string, count: number): Promise<void> {
  const frames = (await e2e.client.getDownloads(jobId)).frameOutputs ?? [];
  expect(frames).toHaveLength(count);
  for (const f of frames) {
    const bytes = Buffer.from(await (await fetch(f.url)).arrayBuffer());
    expect(bytes.subarray(0, 8).toString('hex'), f.fileName).toBe(PNG_HEAD);
    expect(bytes.subarray(-12).toString('hex'), f.fileName).toBe(PNG_END);
  }
}

describe('power loss mid-render', () => {
  let dataDir: string;
  const services: E2E[] = [];
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'rb-e2e-power-'));
  });
  afterAll(async () => {
    for (const s of services) await s.svc.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('renders damaged frames again; one damaged later fails finalize, its requeue renders only it', async () => {
    const first = await startE2E({ dataDir });
    services.push(first);
    const { id, workDir, finished } = await stoppedPartway(first, await buildFixture('basic'), 4);
    const outFrames = path.join(workDir, 'out', 'frames');
    expect(finished.length).toBeGreaterThanOrEqual(4);
    // Two of the finished frames come back damaged, the others whole.
    const [empty, zeros, kept, ...rest] = finished as [number, number, number, ...number[]];
    await damage(path.join(outFrames, frameFile(empty)), 'empty');
    await damage(path.join(outFrames, frameFile(zeros)), 'zeros');

    const second = await startE2E({ dataDir });
    services.push(second);
    await waitUntil('Blender to start again', () => blenderProcesses(workDir)[0], {
      timeoutMs: 60_000,
      intervalMs: 25,
    });
    // Damaged once the new worker had looked at out/ (dated before it started, as a power loss leaves it):
    // only finalize can find it now.
    await damage(path.join(outFrames, frameFile(kept)), 'zeros');

    const failed = await second.client.waitForStatus(id, ['completed', 'failed'], {
      intervalMs: 200,
      timeoutMs: 120_000,
    });
    expect(failed.status).toBe('failed');
    expect(failed.failedReason?.name).toBe('FRAMES_MISSING');
    expect(String(failed.failedReason?.errorDetails.message)).toContain(`frames/${frameFile(kept)}`);
    expect(String(failed.failedReason?.errorDetails.message)).toMatch(/machine crash.*requeue the job/);
    // The new worker rendered the damaged frames again and none of the whole ones.
    const begun = framesBegun(second.svc.logs, id);
    expect(begun.has(empty) && begun.has(zeros)).toBe(true);
    expect([kept, ...rest].filter((f) => begun.has(f))).toEqual([]);
    expect([...begun.keys(), kept, ...rest].sort((a, b) => a - b)).toEqual(ALL);

    // The requeue copies the eleven whole frames and renders the one refused.
    const requeued = (await second.client.requeueJob(id)).job.id;
    const done = await second.client.waitForStatus(requeued, ['completed', 'failed'], {
      intervalMs: 200,
      timeoutMs: 120_000,
    });
    expect(done.failedReason ?? null).toBeNull();
    expect([...framesBegun(second.svc.logs, requeued).keys()]).toEqual([kept]);
    await expectWholePngs(second, requeued, 12);
  }, 300_000);

  it('chunked mode renders damaged frames again too, and publishes only whole ones', async () => {
    const chunkedDir = path.join(dataDir, 'chunked');
    const first = await startE2E({ dataDir: chunkedDir, renderMode: 'chunked' });
    services.push(first);
    const { id, workDir, finished } = await stoppedPartway(first, await buildFixture('basic'), 3);
    expect(finished.length).toBeGreaterThanOrEqual(3);
    const outFrames = path.join(workDir, 'out', 'frames');
    await damage(path.join(outFrames, frameFile(finished[0]!)), 'empty');
    await damage(path.join(outFrames, frameFile(finished[1]!)), 'zeros');

    const second = await startE2E({ dataDir: chunkedDir, renderMode: 'chunked' });
    services.push(second);
    // Counted as finished, the damaged frames would reach finalize, which refuses them: the job would fail.
    const done = await second.client.waitForStatus(id, ['completed', 'failed'], {
      intervalMs: 200,
      timeoutMs: 120_000,
    });
    expect(done.failedReason ?? null).toBeNull();
    await expectWholePngs(second, id, 12);
  }, 300_000);
});
