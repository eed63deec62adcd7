// Where task logs live in object storage, once, for the worker that writes them and the service
// that reads them. Each run of a task attempt (an attempt handed back untouched runs again under
// the same number) has its own keys, named by attempt and start time:
//   logs/<workspace>/<job>/<task>/a<attempt>-<startMs>.json        who ran it, written at its start
//   logs/<workspace>/<job>/<task>/a<attempt>-<startMs>/s<seq>-<at>  live segments (bytes from offset <at>)
//   logs/<workspace>/<job>/<task>/a<attempt>-<startMs>.log          the capped log, once the run ended
//   logs/<workspace>/<job>/<task>/a<attempt>-<startMs>.end.json     how it ended, written after the .log
// Logs sit beside the outputs prefix rather than in it: a failed or canceled job's outputs are
// deleted at once, and its logs are what explains it.
import { z } from 'zod';

/** Every log object of a job lives under this prefix (retention deletes it with the outputs). */
export function jobLogPrefix(workspaceId: string, jobId: string): string {
  return `logs/${workspaceId}/${jobId}`;
}

/** Task ids as the queue makes them (`chunk:<job>:3`): letters, digits, `:`, `_`, `-`. */
export const TASK_ID_PATTERN = /^[a-z][a-z-]*:[A-Za-z0-9:_-]{1,190}$/;

/**
 * A task's folder name: its id without the job id (`chunk:<job>:3` -> `chunk-3`); undefined for ids that are no task's.
 */
export function taskLogSegment(taskId: string, jobId: string): string | undefined {
  if (!TASK_ID_PATTERN.test(taskId)) return undefined;
  const parts = taskId.split(':').filter((p) => p !== jobId);
  const seg = parts.join('-');
  return /^[a-z][A-Za-z0-9_-]{0,120}$/.test(seg) ? seg : undefined;
}

/** The key stem of one run: `<job prefix>/<task>/a<attempt>-<startMs>`. */
export function runStem(workspaceId: string, jobId: string, taskSeg: string, attempt: number, startMs: number): string {
  return `${jobLogPrefix(workspaceId, jobId)}/${taskSeg}/a${attempt}-${startMs}`;
}

/** Live segment `seq` (from 1) holding the run's bytes from `offset`. */
export function segmentKey(stem: string, seq: number, offset: number): string {
  return `${stem}/s${String(seq).padStart(6, '0')}-${offset}`;
}

/** Written when a run starts: what the reader's header says about it. */
export const RunStart = z.object({
  taskId: z.string(),
  kind: z.string(),
  attempt: z.int(),
  worker: z.string(),
  startedAt: z.string(),
  frames: z.array(z.int()).nullable(),
});
export type RunStart = z.infer<typeof RunStart>;

/** Written once the run's `.log` is stored: how it ended, and where the omitted middle lies. */
export const RunEnd = z.object({
  endedAt: z.string(),
  /** done, failed, retried, canceled or released (handed back, not counted as an attempt). */
  outcome: z.string(),
  message: z.string().optional(),
  /** Bytes the run wrote in all. */
  totalBytes: z.int(),
  /** The first `headBytes` of the `.log` are the run's first bytes. */
  headBytes: z.int(),
  /** The `.log` ends with the run's bytes from this offset on (== headBytes when nothing was omitted). */
  tailStart: z.int(),
});
export type RunEnd = z.infer<typeof RunEnd>;

export interface LogSegment {
  key: string;
  seq: number;
  offset: number;
  size: number;
}

/** One run of a task attempt as its stored objects show it. */
export interface LogRun {
  /** `<task>/a<attempt>-<startMs>`, unique within the job. */
  id: string;
  taskSeg: string;
  attempt: number;
  startMs: number;
  stem: string;
  startKey?: string;
  endKey?: string;
  final?: { key: string; size: number };
  segments: LogSegment[];
}

const RUN_FILE = /^(a(\d{1,6})-(\d{1,15}))(\.json|\.end\.json|\.log)$/;
const SEGMENT_FILE = /^(a(\d{1,6})-(\d{1,15}))\/s(\d{6,12})-(\d{1,15})$/;

/** Groups a listing of `jobLogPrefix` into runs, ordered by task folder, attempt and start. */
export function parseRuns(prefix: string, objects: readonly { key: string; size: number }[]): LogRun[] {
  const runs = new Map<string, LogRun>();
  const base = `${prefix.replace(/\/+$/, '')}/`;
  for (const o of objects) {
    if (!o.key.startsWith(base)) continue;
    const rel = o.key.slice(base.length);
    const slash = rel.indexOf('/');
    if (slash <= 0) continue;
    const taskSeg = rel.slice(0, slash);
    const rest = rel.slice(slash + 1);
    const file = RUN_FILE.exec(rest);
    const seg = file ? undefined : SEGMENT_FILE.exec(rest);
    const m = file ?? seg;
    if (!m) continue;
    const id = `${taskSeg}/${m[1]}`;
    let run = runs.get(id);
    if (!run) {
      run = { id, taskSeg, attempt: Number(m[2]), startMs: Number(m[3]), stem: `${base}${id}`, segments: [] };
      runs.set(id, run);
    }
    if (file) {
      if (file[4] === '.json') run.startKey = o.key;
      else if (file[4] === '.end.json') run.endKey = o.key;
      else run.final = { key: o.key, size: o.size };
    } else if (seg) {
      run.segments.push({ key: o.key, seq: Number(seg[4]), offset: Number(seg[5]), size: o.size });
    }
  }
  for (const r of runs.values()) r.segments.sort((a, b) => a.seq - b.seq);
  return [...runs.values()].sort((a, b) =>
    a.taskSeg < b.taskSeg ? -1 : a.taskSeg > b.taskSeg ? 1 : a.attempt - b.attempt || a.startMs - b.startMs,
  );
}

/** The line that stands for bytes left out of a log. */
export function omittedLine(bytes: number): string {
  return `[... ${bytes} bytes omitted ...]\n`;
}
