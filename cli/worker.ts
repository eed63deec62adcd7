import type { Command } from 'commander';
import { defaultConfig } from '../service/config.js';
import { openLocalStack } from '../service/local-stack.js';
import { createLogger } from '../service/server.js';
import { enqueueRenderComplete } from '../service/webhooks/delivery.js';
import { startWorker } from '../service/worker/start.js';
import { collect, defaultDataDir, parseWorkers } from './options.js';

interface WorkerOptions {
  dataDir: string;
  workers: number | 'auto';
  blender: string[];
  logLevel: string;
}

/**
 * `renderbridge worker`: render slots in their own process, beside a service on the same data
 * folder (embedded stack). The service keeps delivering webhooks; this process only renders.
 */
export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('Run render slots for a service on this machine (same --data-dir); the service can then run with --workers 0')
    .option('--data-dir <dir>', "the service's data folder", defaultDataDir())
    .option('--workers <n>', 'render slots: auto (one per GPU, else one) or N CPU slots', parseWorkers, 'auto')
    .option('--blender <path>', 'a Blender build to offer (repeatable)', collect, [])
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', 'info')
    .action(async (o: WorkerOptions) => {
      const config = defaultConfig({ dataDir: o.dataDir, workers: o.workers === 0 ? 'auto' : o.workers, blenderPaths: o.blender, logLevel: o.logLevel as never });
      const log = createLogger(config.logLevel);
      const stack = await openLocalStack(config);
      const worker = await startWorker(
        { ...stack.deps, onCompleted: async (rec) => void (await enqueueRenderComplete(stack.webhooks, rec.job)) },
        config,
        log,
      );
      if (!worker.runtime) {
        await stack.close();
        throw new Error('no Blender found: install it (apt-get install blender) or pass --blender PATH');
      }
      console.error(`renderbridge worker: ${worker.slots.map((s) => s.id).join(', ')} on ${config.dataDir}`);
      const stop = () => void worker.stop().then(() => stack.close()).then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
}
