// Child process for bench:render: the reference service (`role: 'service'`) or a worker beside it
// on the same data folder (`role: 'worker'`, as `renderbridge worker --data-dir` runs), from the
// compiled dist/ like `renderbridge` itself, logging off. Receives its config and worker tuning
// over IPC, answers { origin, baseUrl } (service) or {} (worker) once running, exits when told
// or orphaned. The service may log to a file (the kill scenario reads its billing lines).
import { createWriteStream, existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import type { ServiceConfig } from '../../service/config.js';
import type { WorkerTuning } from '../../service/worker/start.js';
import { REPO_ROOT } from './children.js';

type Config = typeof import('../../service/config-defaults.js');
type Server = typeof import('../../service/server.js');
type Stack = typeof import('../../service/stack.js');
type Start = typeof import('../../service/worker/start.js');

export interface RenderChildInput {
  role: 'service' | 'worker';
  config: Partial<ServiceConfig>;
  worker?: WorkerTuning;
  /** The service's log (JSON lines, level info) goes to this file. Default: no log. */
  logFile?: string;
}

async function load<T>(rel: string): Promise<T> {
  const file = path.join(REPO_ROOT, 'dist', rel);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  return (await import(pathToFileURL(file).href)) as T;
}

process.once('message', (input: RenderChildInput) => {
  void (async () => {
    const { defaultConfig } = await load<Config>('service/config-defaults.js');
    const config = defaultConfig({ ...input.config, host: '127.0.0.1', port: 0, logLevel: 'silent' });
    let close: () => Promise<void>;
    if (input.role === 'service') {
      const { createLogger, startService } = await load<Server>('service/server.js');
      // debug: the kill scenario counts the per-frame `render time billed` lines.
      const logger = input.logFile ? createLogger('debug', createWriteStream(input.logFile)) : false;
      const svc = await startService(config, { logger, ...(input.worker ? { worker: input.worker } : {}) });
      close = () => svc.close();
      process.send!({ origin: svc.origin, baseUrl: svc.baseUrl });
    } else {
      const { openStack } = await load<Stack>('service/stack.js');
      const { startWorker } = await load<Start>('service/worker/start.js');
      const stack = await openStack(config);
      const worker = await startWorker(stack.deps, config, pino({ level: 'silent' }), input.worker);
      close = async () => {
        await worker.stop();
        await stack.close();
      };
      process.send!({});
    }
    const stop = () => void close().finally(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('disconnect', stop);
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});
