// Reads a job's task logs back from object storage: the runs of each task attempt (live ones from
// their segments, ended ones from their capped `.log`), a run's bytes from any offset with the
// omitted middle marked, and the header that names a run. Used by GET /jobs/{id}/logs and its index.
import type { Readable } from 'node:stream';
import type { ObjectStorage } from '../ports/storage.js';
import type { TaskRun } from '../ports/tasks.js';
import {
  jobLogPrefix,
  omittedLine,
  parseRuns,
  RunEnd,
  RunStart,
  taskLogSegment,
  type LogRun,
} from '../domain/task-log-keys.js';

export type LogStorage = Pick<ObjectStorage, 'get' | 'list'>;

/** A run with what its small objects say. */
export interface ReadRun extends LogRun {
  start: RunStart | undefined;
  end: RunEnd | undefined;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
  return Buffer.concat(parts);
}

/** An object's bytes; undefined when it is gone (a segment deleted since the listing). */
async function getBytes(storage: LogStorage, key: string): Promise<Buffer | undefined> {
  try {
    return await readAll(await storage.get(key));
  } catch {
    return undefined;
  }
}

async function getJson<T>(
  storage: LogStorage,
  key: string | undefined,
  schema: { safeParse(v: unknown): { success: boolean; data?: T } },
): Promise<T | undefined> {
  if (!key) return undefined;
  const bytes = await getBytes(storage, key);
  if (!bytes) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(bytes.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export interface ListRunsOptions {
  /** Only this task's runs (its folder is listed, not the job's). */
  taskSeg?: string;
  /** Only this attempt's runs. */
  attempt?: number;
  /**
   * Start and end records by run id, kept across calls (follow lists every second; records never change once written).
   */
  known?: Map<string, { start?: RunStart; end?: RunEnd }>;
}

/** The job's runs (or one task's, one attempt's) with their start and end records. */
export async function listRuns(
  storage: LogStorage,
  workspaceId: string,
  jobId: string,
  o: ListRunsOptions = {},
): Promise<ReadRun[]> {
  const prefix = jobLogPrefix(workspaceId, jobId);
  const known = o.known ?? new Map<string, { start?: RunStart; end?: RunEnd }>();
  const listed = await storage.list(o.taskSeg ? `${prefix}/${o.taskSeg}/` : `${prefix}/`);
  const runs = parseRuns(prefix, listed).filter(
    (r) => (!o.taskSeg || r.taskSeg === o.taskSeg) && (o.attempt === undefined || r.attempt === o.attempt),
  );
  return Promise.all(
    runs.map(async (r) => {
      const k = known.get(r.id) ?? {};
      k.start ??= await getJson(storage, r.startKey, RunStart);
      // A run is ended once its end record exists: the `.log` was stored before it.
      if (r.final) k.end ??= await getJson(storage, r.endKey, RunEnd);
      known.set(r.id, k);
      return { ...r, start: k.start, end: r.final ? k.end : undefined };
    }),
  );
}

/** Orders runs as the job's tasks are ordered (oldest first), then by attempt and start. */
export function orderRuns(runs: readonly ReadRun[], tasks: readonly TaskRun[], jobId: string): ReadRun[] {
  const rank = new Map<string, number>();
  tasks.forEach((t, i) => {
    const seg = taskLogSegment(t.id, jobId);
    if (seg) rank.set(seg, i);
  });
  const r = (x: ReadRun) => rank.get(x.taskSeg) ?? Number.MAX_SAFE_INTEGER;
  return [...runs].sort(
    (a, b) =>
      r(a) - r(b) ||
      (a.taskSeg < b.taskSeg ? -1 : a.taskSeg > b.taskSeg ? 1 : 0) ||
      a.attempt - b.attempt ||
      a.startMs - b.startMs,
  );
}

/**
 * The run's bytes from offset `from` on, as far as stored now, with a "[... N bytes omitted ...]"
 * line where bytes are missing; `to` is the offset reached (where a later read goes on).
 */
export async function readRun(
  storage: LogStorage,
  run: ReadRun,
  from: number,
): Promise<{ chunks: Buffer[]; to: number }> {
  if (run.end && run.final) {
    const end = run.end;
    if (from >= end.totalBytes) return { chunks: [], to: from };
    const log = await getBytes(storage, run.final.key);
    if (!log) return { chunks: [], to: from };
    const chunks: Buffer[] = [];
    if (from < end.headBytes) chunks.push(log.subarray(from, end.headBytes));
    const tailFrom = Math.max(from, end.tailStart);
    const tailBytes = end.totalBytes - end.tailStart;
    if (Math.max(from, end.headBytes) < end.tailStart)
      chunks.push(Buffer.from(omittedLine(end.tailStart - Math.max(from, end.headBytes))));
    chunks.push(log.subarray(log.length - (end.totalBytes - tailFrom), log.length).subarray(0, tailBytes));
    return { chunks: chunks.filter((c) => c.length > 0), to: end.totalBytes };
  }
  const chunks: Buffer[] = [];
  let at = from;
  for (const seg of run.segments) {
    if (seg.offset + seg.size <= at) continue;
    const bytes = await getBytes(storage, seg.key);
    // Deleted since the listing (the tail moved on, or the run just ended): the next read sees why.
    if (!bytes) break;
    if (seg.offset > at) chunks.push(Buffer.from(omittedLine(seg.offset - at)));
    chunks.push(bytes.subarray(Math.max(0, at - seg.offset)));
    at = seg.offset + bytes.length;
  }
  return { chunks, to: at };
}

/** A frame list as ranges: 1-4,7,9-10. */
export function frameText(frames: readonly number[] | null | undefined): string | undefined {
  if (!frames || frames.length === 0) return undefined;
  const parts: string[] = [];
  let i = 0;
  while (i < frames.length) {
    let j = i;
    while (j + 1 < frames.length && frames[j + 1] === frames[j]! + 1) j++;
    parts.push(j > i ? `${frames[i]}-${frames[j]}` : `${frames[i]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** What a run is now: how it ended, `running`, or `interrupted` (its worker stopped writing without ending it). */
export function runState(run: ReadRun, task: TaskRun | undefined, newest: boolean): string {
  if (run.end) return run.end.outcome;
  return task?.state === 'running' && newest && task.attempts === run.attempt ? 'running' : 'interrupted';
}

/** The header line above a run's bytes. */
export function runHeader(run: ReadRun, task: TaskRun | undefined, state: string): string {
  const kind = run.start?.kind ?? task?.kind ?? 'task';
  const frames = frameText(run.start?.frames ?? task?.frames);
  const id = run.start?.taskId ?? task?.id ?? run.taskSeg;
  const worker = run.start?.worker ?? 'unknown worker';
  return (
    `==> task ${id} (${kind}${frames ? `, frames ${frames}` : ''}), attempt ${run.attempt}, ` +
    `worker ${worker}: ${state} <==\n`
  );
}
