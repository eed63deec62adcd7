// `renderbridge jobs logs ID`: the job's task logs (extension task-logs): GET /jobs/{id}/logs as
// text, or with --follow kept open until the job ends; --json prints the index of tasks and
// attempts (GET /jobs/{id}/logs/index). A service without the extension (GET /extensions does not
// list it, or a spec-only service without GET /extensions) is "not offered", exit NOT_OFFERED.
import { Option, type Command } from 'commander';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { cliConfig, clientProvider, withConnectionOptions, type ConnectionOptions } from './connection.js';
import { parsePositiveInt } from './options.js';
import { createOutput } from './output.js';

interface LogsOptions extends ConnectionOptions {
  follow?: boolean;
  task?: string;
  attempt?: number;
}

export function registerJobLogsCommand(jobs: Command): void {
  withConnectionOptions(
    jobs
      .command('logs')
      .description(
        `Print a job's task logs (every attempt of every task, Blender's full output), where the service ` +
          `offers them (task-logs extension); exit ${EXIT.NOT_OFFERED} where it does not`,
      )
      .argument('<id>', 'job id')
      .option(
        '-f, --follow',
        'keep printing new lines of running tasks until the job has ended (exit 0); Ctrl-C stops earlier',
      )
      .option('--task <taskId>', 'only this task (an id from the job page or --json, e.g. chunk:<job id>:3)')
      .addOption(
        new Option('--attempt <n>', 'only this attempt of the task (1 is the first run)').argParser(parsePositiveInt),
      ),
  ).action(async (id: string, o: LogsOptions) => {
    const config = cliConfig(o);
    const client = await clientProvider(config).client();
    // The typed call first: a wrong id, key or URL is reported exactly as by every other command.
    await client.getJob(id);
    if (!(await client.hasExtension('task-logs'))) {
      throw new CliError(
        'this service does not offer task logs (GET /extensions does not list the task-logs extension)',
        EXIT.NOT_OFFERED,
        'TASK_LOGS_NOT_OFFERED',
      );
    }
    const out = createOutput(o);
    if (o.json) {
      out.result({ ...(await client.jobLogIndex(id, o.task ? { task: o.task } : {})) });
      return;
    }
    const stop = new AbortController();
    // Ctrl-C ends a follow cleanly: what arrived is printed, nothing else is said.
    const onSigint = () => stop.abort();
    process.once('SIGINT', onSigint);
    try {
      const query = {
        ...(o.task ? { task: o.task } : {}),
        ...(o.attempt ? { attempt: o.attempt } : {}),
        ...(o.follow ? { follow: true } : {}),
      };
      for await (const text of client.jobLogs(id, query, { signal: stop.signal })) {
        if (!o.quiet) process.stdout.write(text);
      }
    } catch (err) {
      if (!stop.signal.aborted) throw err;
    } finally {
      process.off('SIGINT', onSigint);
    }
  });
}
