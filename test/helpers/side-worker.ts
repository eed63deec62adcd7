// Farms of more than one worker in the e2e tests: the test service's own worker, and workers
// started beside it on the same machine. Each has a name (the blocklist, GET /workers and the
// tasks' `worker` show it) and the e2e timings, so a claim or a heartbeat is seen within a poll.
import type { ServiceConfig } from '../../service/config.js';
import { createLogger } from '../../service/server.js';
import { startWorker, type StartedWorker, type WorkerTuning } from '../../service/worker/start.js';
import type { TestService } from './service.js';

/** The tuning of a worker named `name`, with the e2e tests' heartbeat and poll. */
export function namedWorker(name: string): WorkerTuning {
  return { runtime: { heartbeatMs: 200, pollMs: 100, workerName: name, workerId: name } };
}

/**
 * Starts a worker named `name` beside `svc`'s own, with `config`, on the service's ports: the same
 * data folder (one machine), so the service's worker finalizes what this one renders, and the
 * farm's registry, so placement sees it.
 */
export function startSideWorker(svc: TestService, name: string, config: ServiceConfig): Promise<StartedWorker> {
  const ports = svc.service.ports;
  return startWorker(
    {
      jobs: ports.jobs,
      storage: ports.storage,
      queue: ports.queue,
      registry: ports.workers!.registry,
      farm: ports.workers!.registry,
      ...(ports.frameStats ? { frameStats: ports.frameStats } : {}),
    },
    config,
    createLogger('silent'),
    namedWorker(name),
  );
}
