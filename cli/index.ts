import { Command, CommanderError } from 'commander';
import { registerAdminCommands } from './admin.js';
import { registerServiceCommand } from './service.js';
import { registerWorkerCommand } from './worker.js';
import { VERSION } from './version.js';

/** Exit codes (documented in the README): 0 success, 1 failure, 2 usage error. */
export const EXIT = { OK: 0, FAILURE: 1, USAGE: 2 } as const;

export function buildProgram(): Command {
  const program = new Command('renderbridge')
    .description('Send Blender scenes to a render farm and get the frames back.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerServiceCommand(program);
  registerWorkerCommand(program);
  registerAdminCommands(program);
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
    console.error(`renderbridge: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = EXIT.FAILURE;
  }
}

await main();
