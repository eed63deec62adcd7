// The job a piece of worker code works for, carried along its async calls. A remote worker's
// storage (service/worker-api/remote-storage.ts) names it to the service, which opens only that
// job's objects; handlers take storage keys (an upload, a blob) that do not name their job. Here,
// beside both, so that the worker-api need not reach into the worker.
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<string>();

/** Runs `fn` (and everything it starts) for job `jobId`. */
export function runForJob<T>(jobId: string, fn: () => T): T {
  return current.run(jobId, fn);
}

/** The job the running code works for; undefined outside a task or a job's cleanup. */
export function currentJob(): string | undefined {
  return current.getStore();
}
