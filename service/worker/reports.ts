// What the worker tells others about itself: the metrics and the log once at start, and the worker
// registry (extension workers) on every heartbeat: who it is, what it has, what its lanes do.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/registry.js';
import type { WorkerReporter } from '../ports/workers.js';
import type { BlenderBuild } from '../../blender/builds.js';
import type { DeviceInventory } from '../../blender/devices.js';
import type { Slot } from './runtime/devices.js';
import type { WorkerEnv, WorkerSettings } from './runtime/env.js';
import type { Lane } from './runtime/runtime.js';
import type { LaneActivity } from './runtime/activity.js';
import type { Placement } from './runtime/placement.js';
import type { WarmPool } from './runtime/warm-pool.js';
import type { WarmRender } from './render/warm-render.js';
import { WorkerHeartbeat, type HeartbeatOptions } from './runtime/heartbeat.js';

/** Tells the metrics and the log what this worker brings. */
export function announce(
  metrics: Metrics | undefined,
  log: Logger,
  w: {
    workerName: string;
    builds: readonly BlenderBuild[];
    devices: WorkerEnv['devices'];
    slots: readonly Slot[];
  },
) {
  metrics?.describeWorker({
    worker: w.workerName,
    blender: w.builds.map((b) => b.version.text),
    gpus: w.devices.gpus.map((g) => ({ name: g.name, vramMb: g.memoryMiB })),
  });
  log.info(
    { blender: w.builds.map((b) => `${b.version.text} ${b.binary}`), slots: w.slots.map((s) => s.id) },
    'worker started',
  );
}

export interface HeartbeatParts {
  selfId: string;
  workerName: string;
  builds: readonly BlenderBuild[];
  devices: DeviceInventory;
  settings: WorkerSettings;
  lanes: readonly Lane[];
  activity: LaneActivity;
  pool: WarmPool<WarmRender>;
  placement: Placement;
  /** The renderbridge version this worker reports. Default 'dev'. */
  version?: string | undefined;
  /** The heartbeat's period and least gap. Default: HeartbeatOptions' defaults. */
  heartbeat?: Omit<HeartbeatOptions, 'log'> | undefined;
  log: Logger;
  machineBytes: number;
  tags: readonly string[];
}

/** This worker in the registry: who it is, what it has, and what its lanes do. */
export function workerHeartbeat(registry: WorkerReporter, h: HeartbeatParts): WorkerHeartbeat {
  return new WorkerHeartbeat(
    registry,
    {
      identity: {
        id: h.selfId,
        name: h.workerName,
        hostname: hostname(),
        version: h.version ?? 'dev',
        builds: h.builds.map((b) => ({ version: b.version.text, path: b.binary, kind: b.kind ?? 'executable' })),
        gpus: h.devices.gpus.map((g) => ({ name: g.name, uuid: g.uuid, memoryMiB: g.memoryMiB })),
        sandbox: h.settings.sandbox,
        memoryBytes: h.machineBytes,
        ...(h.tags.length > 0 ? { tags: [...h.tags] } : {}),
      },
      lanes: h.lanes,
      activity: h.activity,
      warm: () => h.pool.live(),
      gpuNames: new Map(h.devices.gpus.map((g) => [g.uuid, g.name])),
      blocklistedBy: () => h.placement.blocklistedBy(),
    },
    { ...h.heartbeat, log: h.log },
  );
}
