// `renderbridge jobs priority ID N | pause ID | resume ID | approve ID` (extension scheduling): a
// job's priority, pause and resume, and "go" after its preview frames. A service without the
// extension is "not offered", exit NOT_OFFERED, as for `jobs requeue`.
import type { Command } from 'commander';
import type { Job } from '../shared/api/job.js';
import { PRIORITY_MAX, PRIORITY_MIN } from '../shared/api/scheduling.js';
import type { RenderJobClient } from '../shared/client/client.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { cliConfig, clientProvider, withConnectionOptions, type ConnectionOptions } from './connection.js';
import { createOutput } from './output.js';

/** A priority argument: an integer 0-100. */
export function parsePriority(v: string): number {
  const n = Number(v);
  if (!/^\d{1,3}$/.test(v.trim()) || n < PRIORITY_MIN || n > PRIORITY_MAX) {
    throw new CliError(`a priority is an integer ${PRIORITY_MIN}-${PRIORITY_MAX} (got "${v}")`, EXIT.USAGE);
  }
  return n;
}

/** One line on a job's scheduling, for `jobs show` and these commands. */
export function schedulingLine(job: Job): string | undefined {
  const s = job.scheduling;
  if (!s) return undefined;
  const parts = [`priority ${s.priority}`];
  if (s.paused) parts.push('paused');
  if (s.waitingFor.length) parts.push(`waiting for ${s.waitingFor.join(', ')}`);
  if (s.previews?.gate === 'waiting') parts.push(`previews ${s.previews.frames.join(', ')} await approval`);
  if (s.requiredTags?.length) parts.push(`requires tags ${s.requiredTags.join(', ')}`);
  return `scheduling: ${parts.join(', ')}`;
}

async function offered(o: ConnectionOptions, id: string): Promise<RenderJobClient> {
  const client = await clientProvider(cliConfig(o)).client();
  // The typed call first: a wrong id, key or URL is reported exactly as by every other command.
  await client.getJob(id);
  if (!(await client.hasExtension('scheduling'))) {
    throw new CliError(
      'this service does not offer scheduling (GET /extensions does not list the scheduling extension)',
      EXIT.NOT_OFFERED,
      'SCHEDULING_NOT_OFFERED',
    );
  }
  return client;
}

function report(o: ConnectionOptions, job: Job, said: string): void {
  const out = createOutput(o);
  out.result({ job });
  out.line(said);
  const line = schedulingLine(job);
  if (line) out.line(line);
}

export function registerJobSchedulingCommands(jobs: Command): void {
  const notOffered = `exit ${EXIT.NOT_OFFERED} where the service does not offer it`;
  withConnectionOptions(
    jobs
      .command('priority')
      .description(
        `Change an unfinished job's priority (0-100, higher first; default 50): its frames not started yet ` +
          `follow it; ${notOffered}`,
      )
      .argument('<id>', 'job id')
      .argument('<priority>', 'integer 0-100', parsePriority),
  ).action(async (id: string, priority: number, o: ConnectionOptions) => {
    const job = await (await offered(o, id)).setJobPriority(id, priority);
    report(o, job, `Job ${id} now has priority ${priority}.`);
  });

  withConnectionOptions(
    jobs
      .command('pause')
      .description(`Pause a job: no new frame starts until resume, running frames finish; ${notOffered}`)
      .argument('<id>', 'job id'),
  ).action(async (id: string, o: ConnectionOptions) => {
    const job = await (await offered(o, id)).pauseJob(id);
    report(
      o,
      job,
      `Paused job ${id}: running frames finish, no new one starts. Resume: renderbridge jobs resume ${id}`,
    );
  });

  withConnectionOptions(
    jobs.command('resume').description(`Resume a paused job; ${notOffered}`).argument('<id>', 'job id'),
  ).action(async (id: string, o: ConnectionOptions) => {
    const job = await (await offered(o, id)).resumeJob(id);
    report(o, job, `Resumed job ${id}.`);
  });

  withConnectionOptions(
    jobs
      .command('approve')
      .description(
        `Approve the preview frames of a job submitted with --approve-previews: the rest renders; ${notOffered}`,
      )
      .argument('<id>', 'job id'),
  ).action(async (id: string, o: ConnectionOptions) => {
    const job = await (await offered(o, id)).approvePreviews(id);
    report(o, job, `Approved the previews of job ${id}: the other frames render now.`);
  });
}
