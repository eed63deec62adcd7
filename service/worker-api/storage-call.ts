// One storage call of a remote worker on the service's worker API (storage-contract.ts), for the
// job the code works for: the running task's (job-scope.ts), else the one the key names. The
// service's refusal comes back as a WorkerApiError; OBJECT_ALREADY_EXISTS as the port's error.
import type { z } from 'zod';
import { ObjectExistsError } from '../ports/storage.js';
import { currentJob } from '../job-scope.js';
import { WorkerApiError, type WorkerApiClient } from './client.js';
import { WORKER_API_PREFIX } from './contract.js';
import { jobOfKey } from './storage-scope.js';

/** One storage call for the job the code works for; the service's refusal as a WorkerApiError. */
export async function askStorage(
  api: WorkerApiClient,
  route: string,
  body: Record<string, unknown>,
  key: string,
  status: number,
): Promise<void>;
export async function askStorage<S extends z.ZodType>(
  api: WorkerApiClient,
  route: string,
  body: Record<string, unknown>,
  key: string,
  status: number,
  schema: S,
): Promise<z.infer<S>>;
export async function askStorage(
  api: WorkerApiClient,
  route: string,
  body: Record<string, unknown>,
  key: string,
  status: number,
  schema?: z.ZodType,
): Promise<unknown> {
  const jobId = currentJob() ?? jobOfKey(key);
  if (!jobId)
    throw new Error(
      `no job to ask the service for object ${key} for: a remote worker's storage works only inside a task ` +
        "or a job's cleanup",
    );
  const path = `${WORKER_API_PREFIX}${route}`;
  const a = await api.call('POST', path, { jobId, ...body });
  if (a.status !== status) {
    if (a.status >= 400) throw api.refusal(a, 'POST', path);
    throw new WorkerApiError(
      `${a.url} answered POST ${path} with ${a.status}, expected ${status}: run the same renderbridge ` +
        `version on service and workers.`,
      a.status,
      null,
    );
  }
  if (!schema) return undefined;
  return api.parse(a, 'POST', path, schema);
}

/** The service's OBJECT_ALREADY_EXISTS as the port's ObjectExistsError. */
export function existsAs(key: string): (err: unknown) => never {
  return (err) => {
    throw err instanceof WorkerApiError && err.errorName === 'OBJECT_ALREADY_EXISTS' ? new ObjectExistsError(key) : err;
  };
}
