// The --help text of `renderbridge service` and `renderbridge worker`, whitespace folded, for the
// tests that check an option is listed with its default and environment variable on both.
import { Command } from 'commander';
import { registerServiceCommand } from '../../cli/service.js';
import { registerWorkerCommand } from '../../cli/worker.js';

export function serviceAndWorkerHelp(): { service: string; worker: string } {
  const program = new Command('renderbridge');
  registerServiceCommand(program);
  registerWorkerCommand(program);
  const help = (name: string) =>
    program.commands
      .find((c) => c.name() === name)!
      .helpInformation()
      .replace(/\s+/g, ' ');
  return { service: help('service'), worker: help('worker') };
}
