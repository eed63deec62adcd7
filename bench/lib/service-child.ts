// Child process: the reference service on a given data dir, logging off, on a free port.
// Receives partial config over IPC, answers { origin, baseUrl }, exits when told or orphaned.
import { defaultConfig, type ServiceConfig } from '../../service/config.js';
import { startService } from '../../service/server.js';

process.once('message', (overrides: Partial<ServiceConfig>) => {
  void (async () => {
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
