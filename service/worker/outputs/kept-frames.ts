// Finished frames of a job that stopped (failed or canceled), kept so that a requeue (extension
// job-requeue) copies them instead of rendering them again, and the copy itself. Kept files live
// under the job's output prefix (`<prefix>/kept/<area>/r<base64url of the path in out/>`), so the
// retention sweeper deletes them with the job's outputs; nothing there is ever published.
import { stoppedJobInternal } from '../../domain/job-lifecycle.js';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';
import { ObjectExistsError, type ObjectStorage } from '../../ports/storage.js';
import { jobDirOf } from '../project/job-files.js';
import type { WorkerSettings } from '../runtime/env.js';
import { filesOfFrame, frameOfFile, listFiles, outputLayout, type OutputLayout } from './chunk-files.js';
import { decodeRel, encodeRel, stagingPrefix } from './frame-staging.js';
import { syncFrames } from './durable-frames.js';
import { jobOutputPrefix } from '../../domain/output-keys.js';

export type Area = 'frames' | 'composite';

/** One stored file of an ended job: where it is, and where it goes in `out/`. */
export interface SourceFile {
  key: string;
  area: Area;
  /** Path relative to `out/frames` or `out/composite`. */
  rel: string;
}

const AREAS: readonly Area[] = ['frames', 'composite'];

export function keptPrefix(workspaceId: string, jobId: string): string {
  return `${jobOutputPrefix(workspaceId, jobId)}/kept`;
}

/** What finalize and early outputs write under the output prefix (task logs and kept files stay). */
const UNPUBLISHED = ['frames/', 'composites/', 'archives/', 'video/', 'preview.'];

/** Puts an object as a copy of another; an existing target (an earlier, complete copy) is kept. */
async function copyObject(storage: ObjectStorage, from: string, to: string): Promise<void> {
  await storage.put(to, await storage.get(from)).catch((err: unknown) => {
    if (!(err instanceof ObjectExistsError)) throw err;
  });
}

/**
 * Keeps the finished files of a stopped job: those in this machine's `out/` and those staged for
 * other machines (under `staged`, when frames are staged), then deletes what the job stored early
 * as outputs. Answers how many files the job keeps, on every machine together.
 */
export async function keepFinishedFiles(
  storage: ObjectStorage,
  rec: JobRecord,
  out: OutputLayout,
  staged?: string,
): Promise<number> {
  const kept = keptPrefix(rec.job.workspaceId, rec.job.id);
  for (const area of AREAS) {
    // `out/` holds only finished files (promoted once Blender saved them); `.fetching` is a download under way.
    for (const rel of await listFiles(area === 'frames' ? out.frames : out.composite)) {
      if (rel.endsWith('.fetching')) continue;
      const file = path.join(area === 'frames' ? out.frames : out.composite, ...rel.split('/'));
      await storage.putFile(`${kept}/${area}/${encodeRel(rel)}`, file).catch((err: unknown) => {
        if (!(err instanceof ObjectExistsError)) throw err;
      });
    }
    if (staged) {
      for (const { key } of await storage.list(`${staged}/${area}/`)) {
        await copyObject(storage, key, `${kept}/${area}/${key.slice(key.lastIndexOf('/') + 1)}`);
      }
    }
  }
  const prefix = jobOutputPrefix(rec.job.workspaceId, rec.job.id);
  for (const { key } of await storage.list(prefix)) {
    if (UNPUBLISHED.some((p) => key.startsWith(`${prefix}/${p}`))) await storage.delete(key);
  }
  return (await storage.list(`${kept}/`)).length;
}

/** The files an ended job offers to copy: a completed job's published outputs, else what it kept when it stopped. */
export async function filesOfEndedJob(storage: ObjectStorage, src: JobRecord): Promise<SourceFile[]> {
  const outputs = src.internal.outputs;
  if (src.job.status === 'completed') {
    if (!outputs || src.job.output?.isDeletedForClient) return [];
    return [
      ...outputs.frames.map((f) => ({ key: f.key, area: 'frames' as const, rel: f.relativePath ?? f.fileName })),
      ...outputs.composites.map((f) => ({ key: f.key, area: 'composite' as const, rel: f.relativePath ?? f.fileName })),
    ];
  }
  const kept = keptPrefix(src.job.workspaceId, src.job.id);
  const files: SourceFile[] = [];
  for (const { key } of await storage.list(`${kept}/`)) {
    const [area, seg] = key.slice(kept.length + 1).split('/');
    if ((area === 'frames' || area === 'composite') && seg) files.push({ key, area, rel: decodeRel(seg) });
  }
  return files;
}

/**
 * The frames of `frames` the new render may copy: not asked to render again, and every camera
 * file the new final config expects for it is among `files` (compositor files come along).
 */
export function copyableFrames(
  final: FinalConfig,
  frames: readonly number[],
  files: readonly SourceFile[],
  rerender: ReadonlySet<number>,
): number[] {
  const camera = new Set(files.filter((f) => f.area === 'frames').map((f) => f.rel));
  return frames.filter((frame) => {
    if (rerender.has(frame)) return false;
    const expected = filesOfFrame(final, frame).filter((f) => f.kind === 'camera');
    return expected.length > 0 && expected.every((f) => camera.has(f.relativePath));
  });
}

/**
 * Copies the files of `frames` into the new job: as staged objects when other machines may
 * finalize it (`stagingPrefix`), else into this machine's `out/`, where its render and finalize
 * find them as finished frames. Those in `out/` are fsync'd, with their folders, before this
 * returns: planning counts them done, no task renders them again, so a power loss after planning
 * must not take them (as a render chunk's frames, durable-frames.ts).
 */
export async function copyFrameFiles(
  storage: ObjectStorage,
  files: readonly SourceFile[],
  frames: ReadonlySet<number>,
  to: { stagingPrefix: string } | { out: OutputLayout },
): Promise<number> {
  let copied = 0;
  for (const f of files) {
    if (!frames.has(frameOfFile(f.rel) ?? NaN)) continue;
    if ('stagingPrefix' in to) {
      await copyObject(storage, f.key, `${to.stagingPrefix}/${f.area}/${encodeRel(f.rel)}`);
    } else {
      const target = path.join(f.area === 'frames' ? to.out.frames : to.out.composite, ...f.rel.split('/'));
      await mkdir(path.dirname(target), { recursive: true });
      const tmp = `${target}.fetching`;
      try {
        await pipeline(await storage.get(f.key), createWriteStream(tmp));
        await rename(tmp, target);
      } finally {
        await rm(tmp, { force: true });
      }
    }
    copied++;
  }
  if ('out' in to && copied > 0) await syncFrames(to.out, [...frames]);
  return copied;
}

/**
 * What a worker does when a job stopped under it: keeps the finished files (above), and records
 * until when, so the retention sweeper deletes them after `outputRetentionDays` like outputs.
 */
export async function keepStoppedJob(
  env: {
    storage: ObjectStorage;
    jobs: Pick<WorkerJobStore, 'update'>;
    settings: Pick<WorkerSettings, 'workRoot' | 'stageFrames' | 'outputRetentionDays'>;
  },
  rec: JobRecord,
): Promise<void> {
  const out = outputLayout(jobDirOf(env.settings.workRoot, rec.job.id));
  await keepFinishedFiles(env.storage, rec, out, env.settings.stageFrames ? stagingPrefix(rec.job.id) : undefined);
  // Set even when nothing was kept (the move that stopped the job usually did already): the
  // job's task logs expire with it.
  if (!rec.internal.keptUntil)
    await env.jobs.update(rec.job.id, {}, stoppedJobInternal(env.settings.outputRetentionDays));
}
