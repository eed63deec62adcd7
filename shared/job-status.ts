// The job state machine, as data. Service, client, daemon and tests all read it from here.

export const JOB_STATUSES = [
  'created',
  'validating',
  'validated',
  'debugging',
  'rendering',
  'finalizing',
  'completed',
  'failed',
  'canceled',
  'booting',
  'suspended',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Every allowed move, keyed by the state it leaves. `debugging` and `suspended` ("transitions:
 * not shown") are reachable from the render states and lead back to them, to `failed` or to
 * `canceled`. `rendering -> completed` is allowed because one diagram of the spec skips
 * `finalizing`.
 */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  created: ['validating', 'failed', 'canceled'],
  validating: ['validated', 'failed', 'canceled'],
  validated: ['booting', 'failed', 'canceled'],
  booting: ['rendering', 'suspended', 'failed', 'canceled'],
  rendering: ['finalizing', 'completed', 'debugging', 'suspended', 'failed', 'canceled'],
  finalizing: ['completed', 'failed', 'canceled'],
  debugging: ['rendering', 'failed', 'canceled'],
  suspended: ['booting', 'rendering', 'failed', 'canceled'],
  completed: [],
  failed: [],
  canceled: [],
};

/** Final states: the table lets nothing move a job out of them (a canceled job stays canceled). */
export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(
  JOB_STATUSES.filter((s) => TRANSITIONS[s].length === 0),
);

/** Unfinished states in which the job waits for its client's next call, not for work. */
const AWAITING_CLIENT: ReadonlySet<JobStatus> = new Set(['created', 'validated']);

/**
 * States in which work runs or waits; `GET /jobs/progress` reports these: every unfinished state
 * but those awaiting the client.
 */
export const ACTIVE_STATUSES: ReadonlySet<JobStatus> = new Set(
  JOB_STATUSES.filter((s) => !TERMINAL_STATUSES.has(s) && !AWAITING_CLIENT.has(s)),
);

/** States `POST /jobs/{id}/cancel` accepts ("exact set: not shown"): every unfinished one. */
export const CANCELABLE_STATUSES: ReadonlySet<JobStatus> = new Set(
  JOB_STATUSES.filter((s) => TRANSITIONS[s].includes('canceled')),
);

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}
