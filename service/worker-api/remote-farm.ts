// The farm as a worker on another machine sees it: the live workers' render slots, tags and Blender
// builds, read through the service's internal worker API (GET /workers/live). With it a remote
// worker's placement says on a job that no live worker can ever take it (a required tag, more
// memory than any slot, a Blender build nobody has), and its planner shares frames between the
// farm's slots, as the service's own workers do with the registry itself.
import type { WorkerRecord, WorkerRegistryReader } from '../ports/workers.js';
import { WorkerApiClient, WorkerApiError, type WorkerApiClientOptions } from './client.js';
import { LiveWorkersAnswer, WORKER_API_PREFIX, WORKER_ROUTES, type LiveWorkerWire } from './contract.js';

export class RemoteFarm implements WorkerRegistryReader {
  private readonly api: WorkerApiClient;

  /** Same options as the worker's job store; retryForMs defaults to 2000 ms: placement reads it again soon. */
  constructor(opts: WorkerApiClientOptions) {
    this.api = new WorkerApiClient({ retryForMs: 2000, ...opts });
  }

  /**
   * The live workers, as records with only what the service tells (no tasks, no host): enough for
   * liveSlotFacts, liveRenderSlots and liveBuildVersions. Heartbeats on this machine's clock.
   */
  async listWorkers(): Promise<WorkerRecord[]> {
    const path = `${WORKER_API_PREFIX}${WORKER_ROUTES.liveWorkers.path}`;
    const a = await this.api.call('GET', path);
    if (a.status >= 400) throw this.api.refusal(a, 'GET', path);
    const parsed = LiveWorkersAnswer.safeParse(a.body);
    if (a.status !== 200 || !parsed.success) {
      throw new WorkerApiError(
        `${a.url} answered GET ${path} with ${a.status} and an unexpected body: run the same renderbridge ` +
          `version on service and workers.`,
        a.status,
        null,
      );
    }
    const now = Date.now();
    return parsed.data.workers.map((w) => toRecord(w, now));
  }
}

function toRecord(w: LiveWorkerWire, now: number): WorkerRecord {
  return {
    id: w.id,
    name: w.id,
    hostname: '',
    version: '',
    startedAt: new Date(now).toISOString(),
    state: 'running',
    heartbeatIntervalMs: w.heartbeatIntervalMs,
    heartbeatAt: now - w.heartbeatAgoMs,
    slots: w.slots.map((s) => ({
      id: s.id,
      device: { kind: s.kind, name: s.kind, uuid: null },
      state: 'idle' as const,
      tasks: [],
      warmJobId: null,
      ...(s.memoryBytes !== undefined ? { memoryBytes: s.memoryBytes } : {}),
    })),
    builds: w.builds.map((b) => ({ version: b.version, path: '' })),
    gpus: [],
    tags: w.tags,
    blocklistedBy: [],
  };
}
