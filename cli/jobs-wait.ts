// `renderbridge jobs wait ID` (block until the job ends; the exit code says how) and
// `renderbridge jobs watch ID` (the same, showing frames, rate and ETA while it renders).
// Both poll GET /jobs/{id}, the spec's workflow signal; progress counters only decorate.
import { InvalidArgumentError, type Command } from 'commander';
import type { Job } from '../shared/api/job.js';
import type { JobProgress } from '../shared/api/progress.js';
import { JobStoppedError, WaitTimeoutError } from '../shared/client/errors.js';
import { sleep } from '../shared/client/backoff.js';
import { TERMINAL_STATUSES } from '../shared/job-status.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { cliConfig, clientProvider, withConnectionOptions, type ConnectionOptions } from './connection.js';
import { createOutput } from './output.js';
import { createWatchView } from './watch-view.js';

interface WaitOptions extends ConnectionOptions {
  timeout?: number;
  interval: number;
}

type Outcome = 'completed' | 'failed' | 'canceled' | 'timeout';

function parseSeconds(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError('expected a number of seconds > 0');
  return n;
}

function withWaitOptions(cmd: Command): Command {
  return withConnectionOptions(cmd.argument('<id>', 'job id'))
    .option(
      '--timeout <seconds>',
      `give up after this long with exit ${EXIT.TIMEOUT} (the job goes on; default: no limit)`,
      parseSeconds,
    )
    .option('--interval <seconds>', 'pause between two polls', parseSeconds, 2);
}

export function registerJobWaitCommands(jobs: Command): void {
  withWaitOptions(
    jobs
      .command('wait')
      .description(
        `Wait until a job ends: exit ${EXIT.OK} completed, ${EXIT.VALIDATION_FAILED} failed ` +
          `validation, ${EXIT.RENDER_FAILED} failed rendering, ${EXIT.CANCELED} canceled, ${EXIT.TIMEOUT} ` +
          `--timeout ran out`,
      ),
  ).action(async (id: string, o: WaitOptions) => {
    const client = await clientProvider(cliConfig(o)).client();
    const timeoutMs = o.timeout === undefined ? undefined : o.timeout * 1000;
    const ended = await client
      .waitForStatus(id, ['completed'], {
        intervalMs: o.interval * 1000,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      })
      .then((job) => ({ job, timedOut: false }))
      .catch((err: unknown) => {
        if (err instanceof JobStoppedError) return { job: err.job, timedOut: false };
        if (err instanceof WaitTimeoutError) return { job: err.lastJob, timedOut: true };
        throw err;
      });
    report(id, ended.job, ended.timedOut, null, o);
  });

  withWaitOptions(
    jobs
      .command('watch')
      .description(
        'Follow a job live: frames done, rate (frames/min) and ETA; ends with the exit codes of `jobs wait`',
      ),
  ).action(async (id: string, o: WaitOptions) => {
    const client = await clientProvider(cliConfig(o)).client();
    const view = createWatchView({
      live: Boolean(process.stdout.isTTY) && !o.json && !o.quiet,
      silent: Boolean(o.json || o.quiet),
    });
    const deadline = o.timeout === undefined ? Infinity : Date.now() + o.timeout * 1000;
    let job: Job | undefined;
    let progress: JobProgress | null | undefined;
    try {
      for (;;) {
        [job, progress] = await Promise.all([client.getJob(id), client.getJobProgress(id).catch(() => null)]);
        view.update(job, progress);
        if (TERMINAL_STATUSES.has(job.status) || Date.now() >= deadline) break;
        await sleep(Math.min(o.interval * 1000, Math.max(0, deadline - Date.now())));
      }
    } finally {
      view.stop();
    }
    report(id, job, !TERMINAL_STATUSES.has(job.status), progress ?? null, o);
  });
}

/** The exit code of a job that ended (or of the wait that ran out): what scripts branch on. */
export function exitCodeFor(job: Job | undefined, timedOut: boolean): { outcome: Outcome; exitCode: ExitCode } {
  if (timedOut || !job) return { outcome: 'timeout', exitCode: EXIT.TIMEOUT };
  if (job.status === 'completed') return { outcome: 'completed', exitCode: EXIT.OK };
  if (job.status === 'canceled') return { outcome: 'canceled', exitCode: EXIT.CANCELED };
  return {
    outcome: 'failed',
    exitCode: job.failedReason?.type === 'VALIDATION_FAILED' ? EXIT.VALIDATION_FAILED : EXIT.RENDER_FAILED,
  };
}

function report(
  id: string,
  job: Job | undefined,
  timedOut: boolean,
  progress: JobProgress | null,
  o: WaitOptions,
): void {
  const { outcome, exitCode } = exitCodeFor(job, timedOut);
  createOutput(o).result({ outcome, job: job ?? null, ...(progress ? { progress } : {}) }, exitCode);
  process.exitCode = exitCode;
  if (o.json) return;
  if (outcome === 'completed') {
    createOutput(o).line(`Job ${id} completed. Download: renderbridge jobs download ${id}`);
    return;
  }
  // Not completed is what a script stops on, so it is said on stderr even with --quiet.
  const reason = job?.failedReason
    ? `: ${job.failedReason.name}: ${String(job.failedReason.errorDetails['message'] ?? job.failedReason.type)}`
    : '';
  const text =
    outcome === 'timeout'
      ? `job ${id} is still ${job?.status ?? 'running'} after ${o.timeout ?? 0} s (it goes on; wait again or cancel it)`
      : `job ${id} ${outcome}${reason}`;
  process.stderr.write(`renderbridge: ${text}\n`);
}
