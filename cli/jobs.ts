// `renderbridge jobs list|show|cancel|download` (and wait|watch|logs, registered from their own
// files): the workspace's jobs through the service API.
import path from 'node:path';
import type { Command } from 'commander';
import type { Job } from '../shared/api/job.js';
import { JOB_STATUSES, type JobStatus } from '../shared/job-status.js';
import { downloadJobOutputs } from '../daemon/download/job.js';
import { defaultOutDir } from '../daemon/submit/steps.js';
import { createDisplay } from './display.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { formatDuration, type WatchedProgress } from './watch-view.js';
import { cliConfig, clientProvider, withConnectionOptions, type ConnectionOptions } from './connection.js';
import { registerJobLogsCommand } from './jobs-logs.js';
import { registerJobRequeueCommand } from './jobs-requeue.js';
import { registerJobSchedulingCommands, schedulingLine } from './jobs-scheduling.js';
import { registerJobWaitCommands } from './jobs-wait.js';
import { parsePositiveInt } from './options.js';
import { createOutput } from './output.js';

export function registerJobsCommands(program: Command): void {
  const jobs = program.command('jobs').description('List, inspect, cancel and download the jobs of your workspace');

  withConnectionOptions(jobs.command('list').description('List jobs, newest first'))
    .option('--status <status>', `only jobs in this status (${JOB_STATUSES.join(', ')})`)
    .option('--page <n>', 'page number', parsePositiveInt, 1)
    .option('--page-size <n>', 'jobs per page (1-100)', parsePositiveInt, 20)
    .action(async (o: ConnectionOptions & { status?: string; page: number; pageSize: number }) => {
      if (o.status && !(JOB_STATUSES as readonly string[]).includes(o.status)) {
        throw new CliError(`--status must be one of ${JOB_STATUSES.join(', ')}`, EXIT.USAGE);
      }
      const client = await clientProvider(cliConfig(o)).client();
      const list = await client.listJobs({
        page: o.page,
        pageSize: Math.min(100, o.pageSize),
        ...(o.status ? { status: o.status as JobStatus } : {}),
      });
      const out = createOutput(o);
      out.result({ ...list });
      if (list.jobs.length === 0) {
        out.line(o.status ? `No ${o.status} jobs.` : 'No jobs yet. Submit one with: renderbridge submit scene.blend');
        return;
      }
      for (const j of list.jobs) out.line(jobLine(j));
      const p = list.pagination;
      if (p.totalPages > 1)
        out.line(
          `page ${p.page} of ${p.totalPages} (${p.total} jobs); next: --page ${Math.min(p.page + 1, p.totalPages)}`,
        );
    });

  withConnectionOptions(
    jobs.command('show').description('Show one job, with its progress').argument('<id>', 'job id'),
  ).action(async (id: string, o: ConnectionOptions) => {
    const client = await clientProvider(cliConfig(o)).client();
    const [job, progress] = await Promise.all([client.getJob(id), client.getJobProgress(id)]);
    const out = createOutput(o);
    out.result({ job, progress });
    out.line(jobLine(job));
    if (progress.framesTotal != null)
      out.line(
        `frames: ${progress.framesDone ?? 0}/${progress.framesTotal} done` +
          (progress.framesFailed ? `, ${progress.framesFailed} failed` : '') +
          (progress.percent != null ? ` (${progress.percent.toFixed(0)}%)` : ''),
      );
    const band = (progress as WatchedProgress).etaBand;
    if (band)
      out.line(
        `ETA: ${formatDuration(band.seconds)} ` +
          `(${formatDuration(band.lowSeconds)}-${formatDuration(band.highSeconds)}), from ${band.samples} ` +
          `frames on ${band.slots} slots`,
      );
    const scheduled = schedulingLine(job);
    if (scheduled) out.line(scheduled);
    if (job.placement) out.line(`placement: ${job.placement.reason} (since ${job.placement.since})`);
    if (job.failedReason)
      out.line(`failed: ${job.failedReason.name}: ${String(job.failedReason.errorDetails.message ?? '')}`);
    if (job.status === 'completed') out.line(`download: renderbridge jobs download ${job.id}`);
  });

  withConnectionOptions(
    jobs.command('cancel').description('Cancel a job that has not finished').argument('<id>', 'job id'),
  ).action(async (id: string, o: ConnectionOptions) => {
    const client = await clientProvider(cliConfig(o)).client();
    const job = await client.cancelJob(id);
    const out = createOutput(o);
    out.result({ ...job });
    out.line(`Canceled job ${job.id} (${job.status}).`);
  });

  withConnectionOptions(
    jobs
      .command('download')
      .description("Download a completed job's outputs; complete files are skipped, partial ones resumed")
      .argument('<id>', 'job id'),
  )
    .option('--out <dir>', 'folder the outputs go to (default: <downloads folder>/<name>-<job id>)')
    .option('--zips', 'also download the zips of frames and compositor outputs')
    .action(async (id: string, o: ConnectionOptions & { out?: string; zips?: boolean }) => {
      const config = cliConfig(o);
      const client = await clientProvider(config).client();
      const job = await client.getJob(id);
      const outDir = path.resolve(o.out ?? defaultOutDir(config.downloadsDir, job.sceneFile?.name ?? 'job', job.id));
      const display = createDisplay({ json: Boolean(o.json), quiet: Boolean(o.quiet) });
      const out = createOutput(o);
      const report = await downloadJobOutputs(client, id, outDir, {
        includeZips: Boolean(o.zips),
        onProgress: (d) => display.download(d),
      }).finally(() => display.stop());
      const failed = report.state.state !== 'done';
      const e = report.state.error;
      const code = !failed
        ? EXIT.OK
        : e?.name === 'JOB_NOT_COMPLETED' || e?.name === 'OUTPUTS_DELETED'
          ? EXIT.FAILURE
          : EXIT.DOWNLOAD_FAILED;
      out.result({ ...report.state }, code);
      if (!failed) {
        out.line(
          `Downloaded ${report.state.filesDone} file(s) (${report.state.skipped} already complete) to ${outDir}`,
        );
      }
      if (failed) {
        if (o.json) process.exitCode = code;
        else throw new CliError(e ? `${e.name}: ${e.message}` : 'the download failed', code);
      }
    });

  registerJobWaitCommands(jobs);
  registerJobLogsCommand(jobs);
  registerJobRequeueCommand(jobs);
  registerJobSchedulingCommands(jobs);
}

function jobLine(j: Job): string {
  const when = j.createdAt ? new Date(j.createdAt).toISOString().replace('T', ' ').slice(0, 16) : '';
  return `${j.id}  ${j.status.padEnd(10)}  ${when}  ${j.sceneFile?.name ?? ''}`;
}
