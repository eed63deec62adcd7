// The WaitingPriority read of a worker on another machine, through the service's worker API
// (waiting-routes.ts). It turns preemption on for remote workers: the watch (worker/render/
// warm-preemption.ts) asks it before each frame, so a call fails fast rather than retrying long,
// and a failed call preempts nothing.
import type { z } from 'zod';
import type { TaskKind } from '../ports/tasks.js';
import type { WaitingPriority, WaitingTop } from '../ports/waiting-priority.js';
import { WorkerApiClient, type WorkerApiClientOptions } from './client.js';
import { WORKER_API_PREFIX } from './contract.js';
import { HandBackPlaceAnswer, WAITING_ROUTES, WaitingTopAnswer } from './waiting-routes.js';

/** How long one read keeps trying while no service answers: a frame's look at the queue, not a task's write. */
const RETRY_FOR_MS = 2000;

export class RemoteWaitingPriority implements WaitingPriority {
  private readonly api: WorkerApiClient;

  /** Same options as the worker's job store; retryForMs defaults to 2000 ms. */
  constructor(opts: WorkerApiClientOptions) {
    this.api = new WorkerApiClient({ retryForMs: RETRY_FOR_MS, ...opts });
  }

  async topWaiting(kinds: readonly TaskKind[]): Promise<WaitingTop | undefined> {
    if (kinds.length === 0) return undefined;
    const top = (await this.post(WAITING_ROUTES.top, { kinds }, WaitingTopAnswer)).data;
    return top ?? undefined;
  }

  async takeHandBackPlace(jobId: string, kinds: readonly TaskKind[], holder: string, ttlMs: number): Promise<boolean> {
    if (kinds.length === 0) return false;
    const body = { jobId, kinds, holder, ttlMs: Math.round(ttlMs) };
    return (await this.post(WAITING_ROUTES.place, body, HandBackPlaceAnswer)).data;
  }

  private async post<S extends z.ZodType>(route: string, body: unknown, schema: S): Promise<z.infer<S>> {
    const path = WORKER_API_PREFIX + route;
    const a = await this.api.call('POST', path, body);
    if (a.status >= 400) throw this.api.refusal(a, 'POST', path);
    return this.api.parse(a, 'POST', path, schema);
  }
}
