// The service the per-worker token tests run against, and the calls they make on it: raw calls to
// the worker API (as any HTTP client would make them), a new worker's token, and a lease of a task.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import type { Call } from '../../helpers/flow.js';
import { errorBody, type Answer } from '../../helpers/http.js';
import { type TestService, useTestService } from '../../helpers/service.js';

/** A raw call to the worker API at `origin`, as any HTTP client would make it. */
export async function internal(
  origin: string,
  token: string,
  method: string,
  route: string,
  body?: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${origin}${WORKER_API_PREFIX}${route}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
}

/** The answer for a job this worker may not see: the same for another workspace's job, another worker's and none. */
export function expectNotFound(r: Answer): void {
  expect(r.status).toBe(404);
  expect(errorBody(r)).toMatchObject({
    name: 'JOB_NOT_FOUND',
    message: expect.stringMatching(/among the jobs this worker holds a task of/),
  });
}

/** One service for the calling file (started before its tests, closed after), and the calls on it. */
export class WorkerTokenHarness {
  private readonly used = useTestService({ rateLimitMax: 10_000 });
  readonly call: Call = this.used.call;

  get svc(): TestService {
    return this.used.svc;
  }

  /** A raw call to this service's worker API. */
  internal(token: string, method: string, route: string, body?: unknown): Promise<Answer> {
    return internal(this.svc.origin, token, method, route, body);
  }

  async newWorker(): Promise<{ name: string; token: string }> {
    const name = `w-${randomUUID().slice(0, 8)}`;
    return { name, token: (await createWorkerToken(this.svc.service.ports.workerTokens, name)).token };
  }

  /** Leases a task of `jobId` to the worker `name`, as `renderbridge worker` claims one (lease id `name:pid:lane`). */
  async lease(name: string, jobId: string): Promise<string> {
    const queue = this.svc.service.ports.queue;
    const id = `finalize:${jobId}`;
    await queue.enqueue({ id, jobId, kind: 'finalize' });
    const workerId = `${name}:4242:control`;
    const task = await queue.claim(workerId, ['finalize'], 60_000);
    expect(task?.id, 'the test claims the task it just enqueued').toBe(id);
    return workerId;
  }
}
