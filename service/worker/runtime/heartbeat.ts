// The worker's heartbeat (extension workers): every few seconds, and soon after a slot changes,
// it reports this process to the worker registry (directly, or through the internal worker API
// on another machine): its slots with the task each holds, GPUs, Blender builds and the jobs
// whose blocklist keeps it off. Its last report says it stopped.
import type { Logger } from 'pino';
import type { WorkerReport, WorkerReporter, WorkerSlotReport } from '../../ports/workers.js';
import type { LaneActivity } from './activity.js';
import type { Lane } from './runtime.js';

export interface HeartbeatSources {
  identity: Pick<
    WorkerReport,
    'id' | 'name' | 'hostname' | 'version' | 'builds' | 'gpus' | 'sandbox' | 'memoryBytes' | 'tags'
  >;
  lanes: readonly Lane[];
  activity: LaneActivity;
  /** Warm Blenders by lane: the job whose scene each holds, and whether it is still loading it. */
  warm?: () => readonly { slot: string; jobId: string; loading: boolean }[];
  /** GPU names by UUID, for the slots' devices. */
  gpuNames?: ReadonlyMap<string, string>;
  blocklistedBy?: () => WorkerReport['blocklistedBy'];
}

export interface HeartbeatOptions {
  /** Period of the reports. Default 5000 ms; a worker silent for 3 periods shows as lost. */
  intervalMs?: number;
  /** Least time between two reports, so a burst of slot changes makes one. Default 250 ms. */
  minGapMs?: number;
  log?: Logger;
}

export class WorkerHeartbeat {
  private readonly intervalMs: number;
  private readonly minGapMs: number;
  private readonly log: Logger | undefined;
  private readonly startedAt = new Date().toISOString();
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  /** A change arrived while a report was on its way: another follows it. */
  private again = false;
  private lastSent = 0;
  private lastWarned = 0;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly reporter: WorkerReporter,
    private readonly sources: HeartbeatSources,
    opts: HeartbeatOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 5000;
    this.minGapMs = opts.minGapMs ?? 250;
    this.log = opts.log;
  }

  start(): void {
    this.unsubscribe = this.sources.activity.onChange(() => this.schedule());
    this.timer = setInterval(() => void this.send(), this.intervalMs);
    this.timer.unref();
    void this.send();
  }

  /** Stops reporting; the last report says the worker stopped. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    clearInterval(this.timer);
    clearTimeout(this.soon);
    await this.sending;
    await this.reporter
      .report(this.report('stopped'))
      .catch((err: unknown) => this.log?.warn({ err }, 'reporting this worker stopped failed'));
  }

  /** The report as it would be sent now. */
  report(state: WorkerReport['state'] = 'running'): WorkerReport {
    const s = this.sources;
    const warm = new Map((s.warm?.() ?? []).map((w) => [w.slot, w]));
    const slots: WorkerSlotReport[] = s.lanes.map((lane) => {
      const tasks = s.activity.tasks(lane.name);
      const w = warm.get(lane.name);
      const uuid = lane.slot?.gpuUuids[0] ?? null;
      const device: WorkerSlotReport['device'] = !lane.slot
        ? { kind: 'control', name: 'CPU (validation, planning, finalize)', uuid: null }
        : lane.slot.kind === 'gpu'
          ? { kind: 'gpu', name: (uuid && s.gpuNames?.get(uuid)) || 'GPU', uuid }
          : { kind: 'cpu', name: lane.slot.threads ? `CPU (${lane.slot.threads} threads)` : 'CPU', uuid: null };
      const slotState = w?.loading ? 'loading' : tasks.length > 0 ? 'busy' : 'idle';
      const memory = lane.slot?.memoryBytes;
      return {
        id: lane.name,
        device,
        state: slotState,
        tasks,
        warmJobId: w?.jobId ?? null,
        ...(memory !== undefined ? { memoryBytes: memory } : {}),
      };
    });
    return {
      ...s.identity,
      startedAt: this.startedAt,
      state,
      heartbeatIntervalMs: this.intervalMs,
      slots,
      blocklistedBy: s.blocklistedBy?.() ?? [],
    };
  }

  /** A slot changed: report soon, at most once per minGapMs. */
  private schedule(): void {
    if (this.stopped || this.soon) return;
    const wait = Math.max(0, this.lastSent + this.minGapMs - Date.now());
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.send();
    }, wait);
  }

  private async send(): Promise<void> {
    if (this.stopped) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    this.lastSent = Date.now();
    this.sending = this.reporter
      .report(this.report())
      .catch((err: unknown) => {
        // Once a minute at most: a registry that is down stays down for a while.
        if (Date.now() - this.lastWarned < 60_000) return;
        this.lastWarned = Date.now();
        this.log?.warn({ err }, 'reporting this worker to the registry failed; the farm may show it as lost');
      })
      .finally(() => (this.sending = undefined));
    await this.sending;
    if (this.again) {
      this.again = false;
      this.schedule();
    }
  }
}
