// Child process: the reference service on a given data dir, logging off, on a free port.
// Receives partial config over IPC, answers { origin, baseUrl }, exits when told or orphaned.
// It runs the compiled service in dist/ (what `renderbridge service` runs), not the TypeScript
// sources through tsx, whose transform adds work of its own to every request.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ServiceConfig } from '../../service/config.js';
import { REPO_ROOT } from './children.js';

type Config = typeof import('../../service/config-defaults.js');
type Server = typeof import('../../service/server.js');

async function load<T>(rel: string): Promise<T> {
  const file = path.join(REPO_ROOT, 'dist', rel);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  return (await import(pathToFileURL(file).href)) as T;
}

process.once('message', (overrides: Partial<ServiceConfig>) => {
  void (async () => {
    const { defaultConfig } = await load<Config>('service/config-defaults.js');
    const { startService } = await load<Server>('service/server.js');
    const config = defaultConfig({ workers: 0, ...overrides, host: '127.0.0.1', port: 0, logLevel: 'silent' });
    const svc = await startService(config, { logger: false });
    const stop = () => void svc.close().finally(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('disconnect', stop);
    process.send!({ origin: svc.origin, baseUrl: svc.baseUrl });
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});
