// A keyless farm (startKeylessFarm) with real `renderbridge worker` processes that hold only their
// tokens, for the files that watch remote workers render: started once per file where Blender runs
// (blenderPresent: a skip with its reason outside CI, a failure on CI), stopped after.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import { blenderPresent } from './blender-present.js';
import { startKeylessFarm, type KeylessFarm } from './keyless-worker.js';
import { startWorkerProcess, type WorkerProcess } from './worker-process.js';

export interface KeylessWorkerSpec {
  /** Its name's prefix; a random suffix keeps names apart between runs. */
  prefix: string;
  /** `renderbridge worker` arguments after the farm's. Default none. */
  args?: readonly string[];
}

export interface KeylessWorkers {
  /** Whether Blender runs here: the file's tests skip without it. */
  readonly blender: boolean;
  readonly farm: KeylessFarm;
  readonly client: RenderJobClient;
  /** The worker processes, in the order of the specs. */
  readonly workers: WorkerProcess[];
}

/** `what` names the file's tests where Blender is missing; one worker process per spec. */
export function useKeylessWorkers(what: string, specs: readonly KeylessWorkerSpec[]): KeylessWorkers {
  const blender = blenderPresent(what);
  let farm: KeylessFarm | undefined;
  let client: RenderJobClient | undefined;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    if (!blender) return;
    farm = await startKeylessFarm();
    client = new RenderJobClient({ baseUrl: farm.svc.baseUrl, apiKey: farm.svc.apiKey });
    for (const s of specs) {
      const name = `${s.prefix}-${randomUUID().slice(0, 8)}`;
      workers.push(await startWorkerProcess(farm, { name, ...(s.args ? { args: [...s.args] } : {}) }));
    }
  }, 120_000);
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await farm?.close();
  });
  const started = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error('useKeylessWorkers: the farm starts in beforeAll; use it from a test');
    return x;
  };
  return {
    blender,
    get farm() {
      return started(farm);
    },
    get client() {
      return started(client);
    },
    workers,
  };
}
