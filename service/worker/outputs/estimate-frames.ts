// The files of an estimate's sample frames (extension estimate): stored under the job's output
// prefix as they are rendered, so the job's render, on whichever machine plans it, copies them
// (kept-frames.ts's copy, as a requeue does) instead of rendering those frames again. Rendered
// into a folder of their own, never into the job's `out/`: a render with another request must
// not take them for its own finished frames.
import path from 'node:path';
import type { Logger } from 'pino';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import { sameRequest } from '../../domain/estimate-state.js';
import { jobOutputPrefix } from '../../domain/output-keys.js';
import type { JobRecord } from '../../ports/jobs.js';
import { ObjectExistsError, type ObjectStorage } from '../../ports/storage.js';
import { jobDirOf } from '../project/job-files.js';
import type { WorkerEnv } from '../runtime/env.js';
import { frameOfFile, listFiles, outputLayout, type OutputLayout } from './chunk-files.js';
import { decodeRel, encodeRel, stagingPrefix } from './frame-staging.js';
import { copyableFrames, copyFrameFiles, type SourceFile } from './kept-frames.js';

/**
 * Where an estimate keeps its frames' files: under the job's output prefix, so retention deletes
 * them with it, and apart for each estimate (by when it started): a later estimate of another
 * request must not find the files of an earlier one under the same names.
 */
export function estimatePrefix(workspaceId: string, jobId: string, startedAt: string): string {
  return `${jobOutputPrefix(workspaceId, jobId)}/estimate/${Date.parse(startedAt)}`;
}

/**
 * Stores the finished files of `frames` in `out` under `prefix` (a file stored before is kept)
 * and answers each frame's bytes.
 */
export async function keepEstimateFiles(
  storage: ObjectStorage,
  prefix: string,
  out: OutputLayout,
  frames: readonly number[],
): Promise<Map<number, number>> {
  const want = new Set(frames);
  const bytes = new Map<number, number>();
  for (const [area, dir] of [
    ['frames', out.frames],
    ['composite', out.composite],
  ] as const) {
    for (const rel of await listFiles(dir)) {
      const frame = frameOfFile(rel);
      if (frame === undefined || !want.has(frame) || rel.endsWith('.fetching')) continue;
      const stored = await storage
        .putFile(`${prefix}/${area}/${encodeRel(rel)}`, path.join(dir, ...rel.split('/')))
        .catch(async (err: unknown) => {
          if (!(err instanceof ObjectExistsError)) throw err;
          return { size: 0 };
        });
      bytes.set(frame, (bytes.get(frame) ?? 0) + stored.size);
    }
  }
  return bytes;
}

/** The estimate's stored files, for kept-frames.ts's copyableFrames and copyFrameFiles. */
export async function estimateFiles(storage: ObjectStorage, prefix: string): Promise<SourceFile[]> {
  const files: SourceFile[] = [];
  for (const { key } of await storage.list(`${prefix}/`)) {
    const [area, seg] = key.slice(prefix.length + 1).split('/');
    if ((area === 'frames' || area === 'composite') && seg) files.push({ key, area, rel: decodeRel(seg) });
  }
  return files;
}

/**
 * For a render planned after an estimate of the same request: copies the estimate's frames into
 * the job where its finalize looks (staged objects, or `out/` here, as a requeue's frames) and
 * answers them, so they are not rendered again. Another request (or no finished estimate): none.
 */
export async function copyEstimatedFrames(
  env: WorkerEnv,
  rec: JobRecord,
  final: FinalConfig,
  frames: readonly number[],
  log: Logger,
): Promise<number[]> {
  const est = rec.internal.estimate;
  if (
    !est?.frames?.length ||
    est.state === 'failed' ||
    !sameRequest(est.requestedConfig, rec.job.requestedConfig ?? {})
  )
    return [];
  const files = await estimateFiles(env.storage, estimatePrefix(rec.job.workspaceId, rec.job.id, est.startedAt));
  const sampled = new Set(est.frames);
  const copy = copyableFrames(
    final,
    frames.filter((f) => sampled.has(f)),
    files,
    new Set(),
  );
  if (copy.length === 0) return [];
  const to = env.settings.stageFrames
    ? { stagingPrefix: stagingPrefix(rec.job.id) }
    : { out: outputLayout(jobDirOf(env.settings.workRoot, rec.job.id)) };
  const copied = await copyFrameFiles(env.storage, files, new Set(copy), to);
  log.info({ frames: copy, files: copied }, 'frames copied from the estimate');
  return copy;
}
