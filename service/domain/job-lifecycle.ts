// The gate of the job state machine: every status write of the service, its routes, the worker
// runtime, the task handlers and the internal worker API, is one of these named moves. Each move
// is checked against the table in shared/job-status.ts when this module loads, so a move the
// table forbids cannot exist; the stores check the table again on every write (assertMove), so a
// caller that goes around this module still cannot break it.
import { canTransition, JOB_STATUSES, TRANSITIONS, type JobStatus } from '../../shared/job-status.js';
import type { JobInternal, JobPatch, JobRecord, SchedulingFields } from '../ports/jobs.js';

/** Every state the table lets move to `to`: "every unfinished state" and the like, never typed out twice. */
export function statesThatCanMoveTo(to: JobStatus): JobStatus[] {
  return JOB_STATUSES.filter((s) => TRANSITIONS[s].includes(to));
}

interface MoveDef {
  readonly from: readonly JobStatus[];
  readonly to: JobStatus;
}

/**
 * The moves of a job's life. `debugging` and `suspended` have no named move: nothing in this
 * service puts a job there (the spec shows no transitions for them); the table still lists them.
 */
export const MOVES = {
  /** POST /jobs/{id}/validate (spec rule 2: only from `created`). */
  startValidation: { from: ['created'], to: 'validating' },
  /** The analysis found nothing blocking. */
  markValidated: { from: ['validating'], to: 'validated' },
  /** The analysis found something that stops the render (the job keeps the analysis). */
  rejectScene: { from: ['validating'], to: 'failed' },
  /** POST /jobs/{id}/render. */
  startRender: { from: ['validated'], to: 'booting' },
  /** The first frame started (or the finalize task found the job still booting). */
  markRendering: { from: ['booting'], to: 'rendering' },
  /** Every chunk rendered: outputs are being packaged. */
  startFinalizing: { from: ['rendering'], to: 'finalizing' },
  /** Outputs stored. */
  complete: { from: ['finalizing'], to: 'completed' },
  /** A blocking analysis result, or a task failed for good. */
  fail: { from: statesThatCanMoveTo('failed'), to: 'failed' },
  /** POST /jobs/{id}/cancel: every unfinished state. */
  cancel: { from: statesThatCanMoveTo('canceled'), to: 'canceled' },
} as const satisfies Record<string, MoveDef>;

export type MoveName = keyof typeof MOVES;

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: JobStatus,
    readonly to: JobStatus,
  ) {
    super(`a job cannot move from "${from}" to "${to}" (shared/job-status.ts)`);
    this.name = 'IllegalTransitionError';
  }
}

/** Throws when the table forbids `from -> to`; a write that keeps the status is always allowed. */
export function assertMove(from: JobStatus, to: JobStatus): void {
  if (from !== to && !canTransition(from, to)) throw new IllegalTransitionError(from, to);
}

for (const m of Object.values(MOVES) as MoveDef[]) for (const s of m.from) assertMove(s, m.to);

/**
 * What a move to `failed` or `canceled` records beside the status: until when the job's task logs
 * and kept frames stay (the retention sweeper deletes them then, as it does a completed job's
 * outputs). Without it a job that stopped before any frame was kept would keep its logs forever.
 */
export function stoppedJobInternal(retentionDays: number, now = Date.now()): Pick<JobInternal, 'keptUntil'> {
  return { keptUntil: new Date(now + retentionDays * 86_400_000).toISOString() };
}

/** The one write a move needs: the store's compare-and-set. */
export interface TransitionWriter {
  transition(
    id: string,
    from: readonly JobStatus[],
    to: JobStatus,
    patch?: JobPatch,
    internal?: Partial<JobInternal>,
    scheduling?: SchedulingFields,
  ): Promise<JobRecord | undefined>;
}

/**
 * Moves job `id` by `move`, applying the patches in the same write. Undefined when the job was
 * not in one of the move's `from` states (someone else moved it first): callers decide what that means.
 * `scheduling`: fields of the job's scheduling merged in the same write (TransitionWriter.transition).
 */
export function moveJob(
  store: TransitionWriter,
  id: string,
  move: MoveName,
  patch?: JobPatch,
  internal?: Partial<JobInternal>,
  scheduling?: SchedulingFields,
): Promise<JobRecord | undefined> {
  const m: MoveDef = MOVES[move];
  return scheduling
    ? store.transition(id, m.from, m.to, patch, internal, scheduling)
    : store.transition(id, m.from, m.to, patch, internal);
}

/** The states a move leaves from, for routes that answer "not allowed in this state". */
export function movableFrom(move: MoveName): ReadonlySet<JobStatus> {
  return new Set<JobStatus>(MOVES[move].from);
}
