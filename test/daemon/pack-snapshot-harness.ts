// The farms of the pack snapshot tests: the real service with its worker and real Blender, and the real
// daemon (packer with headless-Blender tracing, submissions, downloads) talking to it directly or through
// a throttled link; the daemon's calls the tests make, and the frame's colours read back (the pack
// fixture's grid of textured cells, test/helpers/pack-fixture.ts). Shared by pack-snapshot.test.ts and
// pack-snapshot-upload.test.ts.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { PackResult, Submission } from '../../shared/daemon/submission-schemas.js';
import { startE2E, waitUntil, type E2E } from '../helpers/e2e.js';
import { cellColours, type PackProject } from '../helpers/pack-fixture.js';
import type { ThrottledLink } from '../helpers/throttled-link.js';
import { daemonCall, startTestBridge } from './harness.js';

export interface SnapshotRig {
  /** The file's scratch folder, made before its tests and removed after them. */
  readonly work: string;
  /** Starts the test's farm, closed after the test (or by closeFarm). */
  startFarm(name: string, opts?: FarmOptions): Promise<Farm>;
  /** Closes the test's farm now, before the test removes a folder it used. */
  closeFarm(): Promise<void>;
}

/** Registers the file's hooks: a scratch folder for the file, a farm per test. */
export function useSnapshotRig(): SnapshotRig {
  let work: string | undefined;
  let farm: Farm | undefined;
  const closeFarm = async () => {
    await farm?.close();
    farm = undefined;
  };
  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'rb-pack-snapshot-'));
  });
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });
  afterEach(closeFarm);
  const scratch = () => {
    if (!work) throw new Error('useSnapshotRig: the scratch folder is made in beforeAll');
    return work;
  };
  return {
    get work() {
      return scratch();
    },
    async startFarm(name, opts) {
      farm = await startFarm(scratch(), name, opts);
      return farm;
    },
    closeFarm,
  };
}

export interface Farm {
  e2e: E2E;
  daemon: RunningBridgeDaemon;
  close(): Promise<void>;
}

export interface FarmOptions {
  /** The throttled link the daemon reaches the service through (default: none, directly). */
  link?: ThrottledLink;
  /** The service's blob part size in bytes (default: the service's). */
  partSize?: number;
  /** The daemon's work folder (default: `<work>/<name>`). */
  daemonWork?: string;
}

/** Service with its worker and a daemon talking to it, directly or through a throttled link. */
async function startFarm(work: string, name: string, opts: FarmOptions = {}): Promise<Farm> {
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
export async function pack(f: Farm, main: string): Promise<PackResult> {
  const r = await daemonCall(f.daemon)('POST', '/pack', { path: main });
  expect(r.status, r.text).toBe(200);
  return PackResult.parse(r.json);
}

export async function startSubmission(f: Farm, body: Record<string, unknown>): Promise<string> {
  const r = await daemonCall(f.daemon)('POST', '/submissions', body);
  expect(r.status, r.text).toBe(202);
  return Submission.parse(r.json).id;
}

export async function submissionOf(f: Farm, id: string): Promise<Submission> {
  return Submission.parse((await daemonCall(f.daemon)('GET', `/submissions/${id}`)).json);
}

export async function settle(f: Farm, id: string): Promise<Submission> {
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
export async function frameColours(outDir: string): Promise<ReturnType<typeof cellColours>> {
  const png = (await readdir(outDir)).find((n) => n.endsWith('.png'));
  if (!png) throw new Error(`no frame in ${outDir}`);
  return cellColours(path.join(outDir, png));
}

/** The submission is uploading and has sent some, not all, of what it has to send. */
export async function midUpload(f: Farm, id: string): Promise<Submission> {
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

export const absRed = (p: PackProject) => path.join(p.root, 'assets', 'abs_red.png');
export const wood = (p: PackProject) => path.join(p.proj, 'textures', 'wood.png');

export function expectPackChanged(s: Submission, file: string): void {
  expect(s.step).toBe('failed');
  expect(s.error?.name, JSON.stringify(s.error)).toBe('PACK_CHANGED');
  expect(s.error?.message).toContain(file);
  expect(s.error?.message).toMatch(/pack again/);
  expect(s.error?.message).not.toMatch(/service URL/);
}
