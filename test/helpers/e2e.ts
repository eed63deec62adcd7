// Shared steps of the end-to-end tests (real service, real Blender): start a service with its
// in-process worker, upload + validate through the public client, poll with deadlines, look at
// the Blender processes of a job, and fetch what the download URLs point to.
import { readdirSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import type { Job } from '../../shared/api/job.js';
import type { RouteBody } from '../../shared/routes.js';
import { buildFixture } from './fixtures.js';
import { api } from './http.js';
import { startTestService, type TestService } from './service.js';

export interface E2E {
  svc: TestService;
  client: RenderJobClient;
}

type ServiceOptions = Parameters<typeof startTestService>[0];

/** A service with one render slot and short worker periods, plus the shared client on it. */
export async function startE2E(options: ServiceOptions = {}): Promise<E2E> {
  const { worker, ...rest } = options ?? {};
  const svc = await startTestService({
    workers: 1,
    ...rest,
    worker: { ...worker, runtime: { heartbeatMs: 200, pollMs: 100, ...worker?.runtime } },
  });
  return { svc, client: new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey }) };
}

type Call = ReturnType<typeof api>;

/** One test file's end-to-end service (startE2E) and the basic fixture's jobs on it. */
export interface E2ESuite extends E2E {
  /** Requests with the service's test key. */
  call: Call;
  /** Uploads the basic fixture through `client` (default the suite's), expects it validated; returns the job id. */
  validated(client?: RenderJobClient): Promise<string>;
}

/**
 * Registers the file's beforeAll (builds the basic fixture, then startE2E(options)) and afterAll
 * (closes the service). Read `svc` and `client` inside tests and hooks; `call` and `validated` can
 * be taken apart at once, they reach the service once it is up.
 */
export function useE2E(options: ServiceOptions = {}): E2ESuite {
  let e2e: E2E | undefined;
  let own: Call | undefined;
  let blend: string | undefined;
  beforeAll(async () => {
    blend = await buildFixture('basic');
    e2e = await startE2E(options);
    own = api(e2e.svc.baseUrl, e2e.svc.apiKey);
  }, 180_000);
  afterAll(async () => {
    await e2e?.svc.close();
  });
  const started = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error('useE2E: the service starts in beforeAll; use it from a test');
    return x;
  };
  const validated = async (client = started(e2e).client): Promise<string> => {
    const id = await submit(client, started(blend));
    expect((await validationOutcome(client, id)).status).toBe('validated');
    return id;
  };
  return {
    get svc() {
      return started(e2e).svc;
    },
    get client() {
      return started(e2e).client;
    },
    call: ((...args: Parameters<Call>) => started(own)(...args)) as Call,
    validated,
  };
}

/** Polls `probe` until it returns something other than undefined/false; throws after `timeoutMs`. */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 30_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

type ValidationConfig = NonNullable<RouteBody<'validateJob'>['validationConfig']>;

/** Uploads a .blend or .zip, creates a job and asks for validation; returns the job id. */
export async function submit(
  client: RenderJobClient,
  file: string,
  validationConfig?: ValidationConfig,
): Promise<string> {
  const target = await client.uploadProject(file);
  const job = await client.createJob({ slug: target.slug });
  await client.validateJob(job.id, validationConfig ? { validationConfig } : {});
  return job.id;
}

/** Waits until the job leaves validation; returns it whatever the outcome (validated or failed). */
export async function validationOutcome(client: RenderJobClient, jobId: string): Promise<Job> {
  return client.waitForStatus(jobId, ['validated', 'failed', 'canceled'], { intervalMs: 150, timeoutMs: 90_000 });
}

/** The job's working folder on the in-process worker (`<dataDir>/work/<jobId>`). */
export function workDirOf(svc: TestService, jobId: string): string {
  return path.join(svc.dataDir, 'work', jobId);
}

export interface ProcInfo {
  pid: number;
  argv: string[];
}

/** Live Blender processes whose argv mentions `needle` (e.g. a job's work folder), read from /proc. */
export function blenderProcesses(needle: string): ProcInfo[] {
  const found: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      // A zombie (killed, not yet reaped) has an empty cmdline: it is not running any more.
      argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      continue; // gone meanwhile
    }
    if (argv.length && path.basename(argv[0]!).startsWith('blender') && argv.some((a) => a.includes(needle))) {
      found.push({ pid: Number(name), argv });
    }
  }
  return found;
}

/** The `-s START -e END` of a Blender render argv. */
export function frameArgs(argv: readonly string[]): { start: number; end: number } | undefined {
  const s = argv.indexOf('-s');
  const e = argv.indexOf('-e');
  return s >= 0 && e >= 0 ? { start: Number(argv[s + 1]), end: Number(argv[e + 1]) } : undefined;
}

/** One `render time billed` log line of a warm Blender: its load, or one frame's render. */
export interface BilledPiece {
  jobId: string;
  lane: string;
  /** Which warm Blender (one label per process). */
  warm: string;
  piece: string;
  ms: number;
  device: string;
  /** The frame, for a frame's piece (absent for the load). */
  frame?: number;
  /** When it was logged (epoch ms). */
  time: number;
}

/** The job's billed pieces from a service's log lines, in log order. */
export function billedPieces(logs: readonly string[], jobId: string): BilledPiece[] {
  return logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((l) => l.includes('"render time billed"'))
    .map((l) => JSON.parse(l) as BilledPiece)
    .filter((p) => p.jobId === jobId);
}

/** How many times each frame of the job was begun by a warm Blender (its billed frame pieces). */
export function framesBegun(logs: readonly string[], jobId: string): Map<number, number> {
  const n = new Map<number, number>();
  for (const p of billedPieces(logs, jobId)) if (p.frame !== undefined) n.set(p.frame, (n.get(p.frame) ?? 0) + 1);
  return n;
}

/** GETs a download URL (presigned, no auth) and returns its bytes. */
export async function fetchBytes(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/** Every file under `dir`, relative, sorted; [] when `dir` does not exist. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** A tiny, fast Cycles render of `frames`. */
export function tinyRender(frames: string, extra: Record<string, unknown> = {}): RouteBody<'renderJob'> {
  return {
    requestedRenderConfig: {
      colorManagementPreset: 'default',
      frameRanges: [frames],
      resolution: [64, 48],
      sampleCount: 4,
      ...extra,
    },
  } as RouteBody<'renderJob'>;
}

/**
 * Submits `file`, validates it and renders `frames` with `sampleCount` samples (slow enough to
 * catch mid-render) until `done` frames are finished; returns the job id while it still renders.
 */
export async function renderingPartway(
  client: RenderJobClient,
  file: string,
  frames: string,
  sampleCount: number,
  done = 2,
): Promise<string> {
  const id = await submit(client, file);
  const validated = await validationOutcome(client, id);
  if (validated.status !== 'validated') throw new Error(`the job did not validate: ${validated.status}`);
  await client.renderJob(id, tinyRender(frames, { sampleCount }));
  await waitUntil(
    `${done} frames done`,
    async () => {
      const p = await client.getJobProgress(id);
      if (p.status === 'completed' || p.status === 'failed')
        throw new Error(`the render ended (${p.status}) before it could be stopped partway`);
      return (p.framesDone ?? 0) >= done;
    },
    { timeoutMs: 120_000, intervalMs: 50 },
  );
  return id;
}

/**
 * Renders frames 1-12 of `file` slowly on `e2e` until `done` frames are finished with Blender still
 * running, then stops the service (its Blender with it); returns the job, its work folder and the
 * frames its `out/` folder held at the stop.
 */
export async function stoppedPartway(
  e2e: E2E,
  file: string,
  done: number,
): Promise<{ id: string; workDir: string; finished: number[] }> {
  const id = await submit(e2e.client, file);
  const validated = await validationOutcome(e2e.client, id);
  if (validated.status !== 'validated') throw new Error(`the job did not validate: ${validated.status}`);
  // In frame order (no previews first): the stop must land inside a chunk that is still rendering.
  await e2e.client.renderJob(id, { ...tinyRender('1-12', { sampleCount: 384 }), scheduling: { previewFrames: false } });
  const workDir = workDirOf(e2e.svc, id);
  await waitUntil(
    `${done} frames done`,
    async () => {
      const p = await e2e.client.getJobProgress(id);
      if (p.status === 'completed' || p.status === 'failed')
        throw new Error(`the render ended (${p.status}) before the stop`);
      return (p.framesDone ?? 0) >= done && blenderProcesses(workDir).length === 1;
    },
    { timeoutMs: 90_000, intervalMs: 50 },
  );
  await e2e.svc.stop();
  const frames = (await filesUnder(path.join(workDir, 'out', 'frames'))).map((f) =>
    Number(/f_(\d+)\.png$/.exec(f)?.[1]),
  );
  return { id, workDir, finished: frames.sort((a, b) => a - b) };
}
