import { Command, CommanderError } from 'commander';
import { registerAdminCommands } from './admin.js';
import { registerDaemonCommand } from './daemon.js';
import { registerJobsCommands } from './jobs.js';
import { registerSubmitCommand } from './submit.js';
import { registerServiceCommand } from './service.js';
import { registerWorkerCommand } from './worker.js';
import { describeFailure } from './errors.js';
import { EXIT } from './exit-codes.js';
import { VERSION } from './version.js';


export function buildProgram(): Command {
  const program = new Command('renderbridge')
    .description('Send Blender scenes to a render farm and get the frames back.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerServiceCommand(program);
  registerWorkerCommand(program);
  registerAdminCommands(program);
  registerSubmitCommand(program);
  registerJobsCommands(program);
  registerDaemonCommand(program);
  return program;
}

async function main(): Promise<void> {
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
      return;
    }
    const { exitCode, message } = describeFailure(err);
    console.error(`renderbridge: ${message}`);
    process.exitCode = exitCode;
  }
}

await main();
