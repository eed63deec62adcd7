// This machine as the worker's handlers see it: the Blender builds it can use (in the sandbox, when
// one is asked for), its render slots with their memory, and the env the handlers run with, built
// once from them and the ports.
import type { Logger } from 'pino';
import type { ServiceConfig } from '../config.js';
import type { FrameStatsWriter } from '../ports/frame-stats.js';
import type { AnalysisCacheStore } from '../ports/analysis-cache.js';
import type { WorkerJobStore } from '../ports/jobs.js';
import type { ObjectStorage } from '../ports/storage.js';
import type { TaskQueue } from '../ports/tasks.js';
import type { WorkerRegistryReader } from '../ports/workers.js';
import { liveBuildVersions, liveRenderSlots } from '../domain/workers.js';
import { BlenderVersionCache } from '../../blender/version.js';
import { buildCandidates, probeBuilds, type BlenderBuild } from '../../blender/builds.js';
import { checkSandbox } from '../../blender/sandbox-check.js';
import { BuildCapabilitiesCache, type DeviceInventory } from '../../blender/devices.js';
import { capabilitiesFor, planSlots, type CapabilitiesOptions, type Slot } from './runtime/devices.js';
import type { WorkerEnv, WorkerSettings } from './runtime/env.js';
import { machineMemoryBytes, slotMemory } from './runtime/slot-memory.js';
import { ownMemoryCgroup } from '../../blender/memory-cgroup.js';
import { BlobCache } from './project/blob-cache.js';

/** The ports the handlers' env is built from (WorkerPorts adds what only the composition root uses). */
export interface EnvPorts {
  jobs: WorkerJobStore;
  storage: ObjectStorage;
  queue: TaskQueue;
  /** Where finished frames' statistics go (extension frame-stats). Default none: not recorded. */
  frameStats?: FrameStatsWriter;
  /** Scene analyses validation may reuse (WorkerEnv.analysisCache). Default none: every validation runs Blender. */
  analysisCache?: AnalysisCacheStore;
  /**
   * The registry as the render planner reads it (the farm's live render slots). Default none: only
   * this worker's slots are known.
   */
  farm?: WorkerRegistryReader;
}

/** What slotMemory gives: the machine's memory, the OOM kills per lane, and its cgroups' removal. */
export type SlotMemory = ReturnType<typeof slotMemory>;

/** This machine's Blender builds, none when there is none or the sandbox they must run in does not work. */
export async function usableBuilds(config: ServiceConfig, log: Logger): Promise<readonly BlenderBuild[] | undefined> {
  const probed = await probeBuilds(
    buildCandidates({ blenderPaths: config.blenderPaths, fromPath: config.blenderFromPath }),
    new BlenderVersionCache(),
  );
  for (const p of probed.problems) log.warn({ problem: p }, 'Blender build not used');
  if (probed.builds.length === 0) {
    log.error(
      'No Blender found: jobs wait in validating. Install Blender (apt-get install blender) or pass --blender PATH.',
    );
    return undefined;
  }
  if (config.sandbox) {
    // Untrusted files never run outside the sandbox: a machine where it does not work runs nothing.
    const check = await checkSandbox(probed.builds[0]!.binary);
    if (!check.ok) {
      throw new Error(
        `the Blender sandbox does not work on this machine (${check.reason}): install bubblewrap (apt-get ` +
          `install bubblewrap) and allow user namespaces, or start with --no-sandbox to run Blender ` +
          `unsandboxed (not for files you do not trust)`,
      );
    }
  } else {
    log.warn(
      "Blender runs WITHOUT the sandbox (--no-sandbox): a project's scripts can reach this machine's network " +
        'and files; its bundled add-ons are not enabled',
    );
  }
  return probed.builds;
}

/**
 * The render slots of this machine, each with its memory: --slot-memory, else the machine's (its
 * cgroup's limit, else the RAM); CPU slots get cgroups of their own where the worker may make them.
 */
export function machineSlots(
  config: ServiceConfig,
  devices: DeviceInventory,
  opts: { workerName: string; log: Logger },
): { slots: Slot[]; memory: SlotMemory } {
  const own = ownMemoryCgroup();
  const slots = planSlots({
    gpus: devices.gpus,
    ...(typeof config.workers === 'number' ? { workers: config.workers } : {}),
    cpuMemoryBytes: config.slotMemoryBytes ?? machineMemoryBytes(own),
  });
  const memory = slotMemory(slots, { slotBytes: config.slotMemoryBytes, name: opts.workerName, log: opts.log, own });
  return { slots, memory };
}

export interface Machine {
  settings: WorkerSettings;
  builds: readonly BlenderBuild[];
  devices: DeviceInventory;
  slots: Slot[];
  workerName: string;
  selfId: string;
  /** How GPU backends count as usable (WorkerTuning.capabilities). */
  capabilities?: CapabilitiesOptions | undefined;
}

/** What the handlers need, built once and complete: nothing is added to it later. */
export function workerEnv(ports: EnvPorts, m: Machine, log: Logger): WorkerEnv {
  const { settings, builds, devices, slots, farm } = { ...m, farm: ports.farm };
  const capsCache = new BuildCapabilitiesCache();
  // Probe the default build now, not on the first render (a Blender start the user would wait for).
  capsCache
    .get(builds[0]!.binary)
    .catch((err: unknown) => log.warn({ err }, 'probing Blender capabilities failed; will retry on the first render'));
  return {
    jobs: ports.jobs,
    workerName: m.workerName,
    ...(ports.frameStats ? { frameStats: ports.frameStats } : {}),
    ...(ports.analysisCache ? { analysisCache: ports.analysisCache } : {}),
    storage: ports.storage,
    queue: ports.queue,
    builds,
    devices,
    renderSlots: slots.length,
    // Its own slots counted here, not from its report: the first one may not be written yet.
    ...(farm
      ? {
          farmSlots: async () =>
            slots.length +
            liveRenderSlots(
              (await farm.listWorkers()).filter((w) => w.id !== m.selfId),
              Date.now(),
            ),
          farmBuilds: async () => [
            ...builds.map((b) => b.version),
            ...liveBuildVersions(await farm.listWorkers(), Date.now()),
          ],
        }
      : {}),
    startedAt: Date.now(),
    settings,
    blobCache: new BlobCache(settings.blobCache),
    capabilities: async (build) =>
      capabilitiesFor(
        { version: build.version, capabilities: await capsCache.get(build.binary) },
        devices,
        m.capabilities,
      ),
  };
}
