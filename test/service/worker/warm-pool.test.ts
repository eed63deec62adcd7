// WarmPool with real warm Blenders on a real scene: one process per slot and job, reused frame
// after frame; another job's frames wait for the slot's current frame, then replace its process;
// idle processes end after the idle time, at once when memory runs short (a test double and a real
// 2 GiB allocation by another process), and with their job.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { warmInvocation } from '../../../blender/render/render-invocation.js';
import type { RenderSettings } from '../../../blender/render/render-settings.js';
import { WarmBlender } from '../../../blender/render/warm-process.js';
import { availableMemory, WarmPool } from '../../../service/worker/runtime/warm-pool.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { waitUntil } from '../../helpers/e2e.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
const FRAME = { totalMs: 120_000, idleMs: 0 };
let work: string;
let scene: string;
let n = 0;
const pools: WarmPool<WarmBlender>[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-warm-pool-'));
  scene = await buildFixture('basic');
}, 120_000);
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A warm Blender on the basic scene with its own folders (what the worker's WarmRender does, minus the job). */
async function starter(): Promise<() => WarmBlender> {
  const dir = join(work, `p${++n}`);
  await mkdir(join(dir, 'frames'), { recursive: true });
  const settings: RenderSettings = {
    schemaVersion: 1,
    device: { type: 'CPU' },
    colorManagement: 'default',
    addons: { ids: [], paths: [] },
    compositeDir: join(dir, 'composite'),
    compositeFolders: {},
    samples: 2,
  };
  await writeFile(join(dir, 'settings.json'), JSON.stringify(settings));
  const invocation = warmInvocation({
    binary: BLENDER,
    sceneFile: scene,
    settingsFile: join(dir, 'settings.json'),
    attemptDir: join(dir, 'frames'),
  });
  return () => WarmBlender.start({ invocation, cwd: dir, loadLimits: FRAME, killGraceMs: 2000 });
}

function pool(opts: ConstructorParameters<typeof WarmPool>[0]): WarmPool<WarmBlender> {
  const p = new WarmPool<WarmBlender>(opts);
  pools.push(p);
  return p;
}

/** Renders one frame in the slot's process for `key`; returns that process. */
async function frame(
  p: WarmPool<WarmBlender>,
  slot: string,
  key: string,
  start: () => WarmBlender,
  f: number,
): Promise<WarmBlender> {
  return p.use(slot, key, key, start, async (w) => {
    await w.ready;
    await w.render({ run: { start: f, end: f, step: 1 }, limits: FRAME });
    return w;
  });
}

describe('WarmPool', () => {
  it('keeps one process per slot and job for its frames, one per slot for two slots', async () => {
    const p = pool({ idleMs: 60_000 });
    const start = await starter();
    const a1 = await frame(p, 'cpu-0', 'job-a', start, 1);
    const a2 = await frame(p, 'cpu-0', 'job-a', start, 2);
    expect(a2).toBe(a1);
    expect(a1.alive).toBe(true);
    const b = await frame(p, 'cpu-1', 'job-a', start, 3);
    expect(b).not.toBe(a1);
    expect(
      p
        .live()
        .map((l) => l.slot)
        .sort(),
    ).toEqual(['cpu-0', 'cpu-1']);
  }, 120_000);

  it("a frame of another job waits for the slot's frame in progress, then replaces its process", async () => {
    const p = pool({ idleMs: 60_000 });
    const [startA, startB] = [await starter(), await starter()];
    const order: string[] = [];
    let a: WarmBlender | undefined;
    const first = p.use('cpu-0', 'job-a', 'job-a', startA, async (w) => {
      a = w;
      await w.ready;
      await w.render({ run: { start: 1, end: 1, step: 1 }, limits: FRAME });
      order.push('a done');
    });
    await waitUntil('job a to hold the slot', () => a !== undefined, { timeoutMs: 10_000, intervalMs: 5 });
    const b = await frame(p, 'cpu-0', 'job-b', startB, 1);
    order.push('b done');
    await first;
    expect(order).toEqual(['a done', 'b done']);
    expect(a!.alive).toBe(false);
    expect(await a!.ended).toBeInstanceOf(Error); // killed: it had no frame left, nothing was lost
    expect(b.alive).toBe(true);
    expect(p.live()).toEqual([{ slot: 'cpu-0', key: 'job-b', jobId: 'job-b', users: 0, loading: false }]);
  }, 120_000);

  it('ends a process once it has idled for idleMs', async () => {
    const p = pool({ idleMs: 300 });
    const w = await frame(p, 'cpu-0', 'job-a', await starter(), 1);
    await w.ended;
    expect(w.alive).toBe(false);
    expect(p.live()).toEqual([]);
  }, 120_000);

  it('ends idle processes while memory is short, and keeps the ones rendering', async () => {
    // The test double: how much memory is free (real pressure cannot be made safely on a shared machine).
    let free = 8 * 2 ** 30;
    const p = pool({ idleMs: 60_000, minFreeMemoryBytes: 2 ** 30, memoryCheckMs: 50, availableMemory: () => free });
    const [startA, startB] = [await starter(), await starter()];
    const idle = await frame(p, 'cpu-0', 'job-a', startA, 1);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let busy: WarmBlender | undefined;
    const busyUse = p.use('cpu-1', 'job-b', 'job-b', startB, async (w) => {
      busy = w;
      await w.ready;
      await held;
    });
    await waitUntil('the busy slot to load', () => busy !== undefined, { timeoutMs: 10_000, intervalMs: 5 });
    free = 100 * 2 ** 20;
    await idle.ended;
    expect(idle.alive).toBe(false);
    expect(busy!.alive).toBe(true);
    release();
    await busyUse;
  }, 120_000);

  it('ends an idle process when this machine really runs short of memory (another process takes 2 GiB)', async () => {
    // Real pressure, kept safe: the threshold sits 1 GiB below what is available now, and a child
    // process then fills 2 GiB of its own memory, so MemAvailable itself falls below it.
    const threshold = availableMemory() - 2 ** 30;
    const p = pool({ idleMs: 60_000, minFreeMemoryBytes: threshold, memoryCheckMs: 50 });
    const w = await frame(p, 'cpu-0', 'job-a', await starter(), 1);
    expect(w.alive).toBe(true);
    // The child fills what it is told to hold and says so; the buffers stay touched while it lives.
    const script =
      "const held = []; process.on('message', (n) => { const b = Buffer.allocUnsafe(n); b.fill(7); " +
      "held.push(b); process.send('held'); }); setInterval(() => held.forEach((b) => b[0]++), 1000);";
    const hog = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const take = (bytes: number) =>
      new Promise<void>((resolve, reject) => {
        const exited = (code: number | null) =>
          reject(new Error(`the memory-holding process exited (${code}) before holding its memory`));
        hog.once('exit', exited);
        hog.once('message', () => {
          hog.off('exit', exited);
          resolve();
        });
        hog.send(bytes);
      });
    try {
      await take(2 ** 31);
      // Other processes (Blender in another test file) may free memory meanwhile: take more, in
      // steps of 512 MiB up to 4 GiB, until MemAvailable is below the threshold.
      for (let held = 2 ** 31; availableMemory() >= threshold && held < 2 ** 32; held += 2 ** 29) await take(2 ** 29);
      expect(availableMemory()).toBeLessThan(threshold);
      await w.ended;
      expect(w.alive).toBe(false);
      expect(p.live()).toEqual([]);
    } finally {
      hog.kill('SIGKILL');
    }
  }, 120_000);

  it("ends a job's processes when the job ends", async () => {
    const p = pool({ idleMs: 60_000 });
    const start = await starter();
    const w = await frame(p, 'cpu-0', 'job-a', start, 1);
    const other = await frame(p, 'cpu-1', 'job-b', await starter(), 1);
    await p.endJob('job-a');
    expect(w.alive).toBe(false);
    expect(other.alive).toBe(true);
  }, 120_000);

  it('reads the memory available on this machine', () => {
    expect(availableMemory()).toBeGreaterThan(0);
  });
});
