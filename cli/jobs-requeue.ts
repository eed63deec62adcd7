// `renderbridge jobs requeue ID [--frames ...]` (extension job-requeue): a failed or canceled job
// again as a new job from its stored project, or chosen frames of a completed one rendered again.
// Repeating the command answers the same new job. A service without the extension is "not
// offered", exit NOT_OFFERED, as for `jobs logs`.
import type { Command } from 'commander';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { cliConfig, clientProvider, withConnectionOptions, type ConnectionOptions } from './connection.js';
import { createOutput } from './output.js';

export function registerJobRequeueCommand(jobs: Command): void {
  withConnectionOptions(
    jobs
      .command('requeue')
      .description(
        `Requeue a failed or canceled job as a new job (no upload: validated again, rendered with the same ` +
          `settings, copying the frames it finished), or render chosen frames of a completed job again; ` +
          `exit ${EXIT.NOT_OFFERED} where the service does not offer it`,
      )
      .argument('<id>', 'job id')
      .option(
        '--frames <ranges>',
        'frames to render again, e.g. "1-10,15" (required for a completed job; every other frame is copied)',
      ),
  ).action(async (id: string, o: ConnectionOptions & { frames?: string }) => {
    const client = await clientProvider(cliConfig(o)).client();
    // The typed call first: a wrong id, key or URL is reported exactly as by every other command.
    await client.getJob(id);
    if (!(await client.hasExtension('job-requeue'))) {
      throw new CliError(
        'this service does not offer requeues (GET /extensions does not list the job-requeue extension)',
        EXIT.NOT_OFFERED,
        'JOB_REQUEUE_NOT_OFFERED',
      );
    }
    const { job, replay } = await client.requeueJob(id, o.frames ? { frames: o.frames } : {});
    const out = createOutput(o);
    out.result({ job, replay, requeuedFrom: id });
    out.line(`${replay ? 'Already requeued' : 'Requeued'} ${id} as job ${job.id} (${job.status}).`);
    out.line(`follow it: renderbridge jobs wait ${job.id}`);
  });
}
