import { registerEstimateCommand } from './estimate.js';
import { Command, CommanderError } from 'commander';
import { registerAdminCommands } from './admin.js';
import { registerConfigCommand } from './config.js';
import { registerLoginCommands } from './login.js';
import { registerStatusCommand } from './status.js';
import { registerDaemonCommand } from './daemon.js';
import { registerJobsCommands } from './jobs.js';
import { registerSubmitCommand } from './submit.js';
import { registerServiceCommand } from './service.js';
import { registerWorkerCommand } from './worker.js';
import { registerWorkersCommand } from './workers.js';
import { registerCompletionCommand } from './completion.js';
import { registerDoctorCommand } from './doctor/doctor.js';
import { describeFailure } from './errors.js';
import { addExamples } from './examples.js';
import { printJson } from './output.js';
import { EXIT } from './exit-codes.js';
import { VERSION } from './version.js';

export function buildProgram(): Command {
  const program = new Command('renderbridge')
    .description('Send Blender scenes to a render farm and get the frames back.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .option(
      '--profile <name>',
      'profile of config.toml to use (env: RENDERBRIDGE_PROFILE; default: defaultProfile of the file, else "default")',
    )
    // The global --profile is copied onto the running command's options, so every action reads
    // it as o.profile, wherever it was typed on the line.
    .hook('preAction', (root, action) => {
      const profile = root.opts<{ profile?: string }>().profile;
      if (profile !== undefined && action.getOptionValue('profile') === undefined)
        action.setOptionValue('profile', profile);
    });
  registerServiceCommand(program);
  registerWorkerCommand(program);
  registerWorkersCommand(program);
  registerAdminCommands(program);
  registerSubmitCommand(program);
  registerEstimateCommand(program);
  registerJobsCommands(program);
  registerDaemonCommand(program);
  registerConfigCommand(program);
  registerLoginCommands(program);
  registerStatusCommand(program);
  registerDoctorCommand(program);
  registerCompletionCommand(program);
  addExamples(program);
  return program;
}

async function main(): Promise<void> {
  // `renderbridge jobs list | head`: the reader left, so there is nobody to tell anything; end
  // quietly as other Unix tools do instead of dying with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.OK);
      throw err;
    });
  }
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
      // Commander already wrote the message to stderr; a script under --json still gets its document.
      if (err.exitCode !== 0 && process.argv.includes('--json'))
        printJson({ ok: false, exitCode: EXIT.USAGE, error: { name: 'USAGE', message: err.message } });
      return;
    }
    const { exitCode, message, body } = describeFailure(err);
    console.error(`renderbridge: ${message}`);
    // Under --json the failure is also the one document on stdout, so scripts parse every outcome.
    if (process.argv.includes('--json')) printJson({ ok: false, exitCode, error: body });
    process.exitCode = exitCode;
  }
}

await main();
