// How a worker reads to a workspace (pure rules): lost after 3 silent heartbeat periods, a lost
// or stopped worker runs nothing, running workers first, and another workspace's jobs unnamed.
import { describe, expect, it } from 'vitest';
import {
  anyWorkerRunning,
  jobIdsOf,
  liveRenderSlots,
  presentWorkers,
  workerState,
} from '../../../service/domain/workers.js';
import type { WorkerRecord } from '../../../service/ports/workers.js';

const base: WorkerRecord = {
  id: 'w:1',
  name: 'w',
  hostname: 'h',
  version: '1.0.0',
  startedAt: '2026-01-01T00:00:00.000Z',
  state: 'running',
  heartbeatIntervalMs: 5000,
  heartbeatAt: 1_000_000,
  slots: [
    {
      id: 'cpu-0',
      device: { kind: 'cpu', name: 'CPU', uuid: null },
      state: 'busy',
      tasks: [
        { jobId: 'mine', taskId: 't1', kind: 'render-chunk', frames: [1], startedAt: '2026-01-01T00:00:01.000Z' },
      ],
      warmJobId: 'theirs',
    },
  ],
  builds: [],
  gpus: [],
  blocklistedBy: [
    { jobId: 'mine', slots: ['w/cpu-0'], failures: 3 },
    { jobId: 'theirs', slots: ['w/cpu-0'], failures: 4 },
  ],
};

describe('workers as a workspace sees them', () => {
  it('counts a worker lost after 3 periods without a heartbeat, and stopped when it said so', () => {
    expect(workerState(base, 1_000_000 + 15_000)).toBe('running');
    expect(workerState(base, 1_000_000 + 15_001)).toBe('lost');
    expect(workerState({ ...base, heartbeatIntervalMs: 500 }, 1_000_000 + 1_501)).toBe('lost');
    expect(workerState({ ...base, state: 'stopped' }, 1_000_000)).toBe('stopped');
    expect(anyWorkerRunning([base], 1_000_000 + 20_000)).toBe(false);
    expect(anyWorkerRunning([{ ...base, state: 'stopped' }, base], 1_000_000 + 1000)).toBe(true);
  });

  it("names only the workspace's own jobs, and shows a lost worker running nothing", () => {
    expect([...jobIdsOf([base])].sort()).toEqual(['mine', 'theirs']);
    const [own] = presentWorkers([base], new Map([['mine', 'shot.blend']]), 1_002_000);
    expect(own!.slots[0]).toEqual({
      ...base.slots[0],
      tasks: [
        {
          kind: 'render-chunk',
          jobId: 'mine',
          jobName: 'shot.blend',
          taskId: 't1',
          frames: [1],
          startedAt: '2026-01-01T00:00:01.000Z',
        },
      ],
      warmJobId: null,
    });
    expect(own!.blocklistedBy).toEqual([{ jobId: 'mine', jobName: 'shot.blend', slots: ['w/cpu-0'], failures: 3 }]);
    expect(own!.secondsSinceHeartbeat).toBe(2);
    const [other] = presentWorkers([base], new Map(), 1_002_000);
    expect(other!.slots[0]!.tasks).toEqual([
      {
        kind: 'render-chunk',
        jobId: null,
        jobName: null,
        taskId: null,
        frames: null,
        startedAt: '2026-01-01T00:00:01.000Z',
      },
    ]);
    expect(other!.blocklistedBy).toEqual([]);
    const [lost] = presentWorkers([base], new Map([['mine', null]]), 1_100_000);
    expect(lost).toMatchObject({ state: 'lost', slots: [{ state: 'idle', tasks: [], warmJobId: null }] });
  });

  it('lists running workers before lost and stopped ones', () => {
    const list = presentWorkers(
      [
        { ...base, id: 's', state: 'stopped' },
        { ...base, id: 'l', heartbeatAt: 0 },
        { ...base, id: 'r' },
      ],
      new Map(),
      1_001_000,
    );
    expect(list.map((w) => [w.id, w.state])).toEqual([
      ['r', 'running'],
      ['l', 'lost'],
      ['s', 'stopped'],
    ]);
  });
});

describe('render slots of the farm (what a render plan shares frames between)', () => {
  it('counts the render slots of running workers, not control lanes, lost or stopped workers', () => {
    const control = {
      id: 'control',
      device: { kind: 'control' as const, name: 'CPU', uuid: null },
      state: 'idle' as const,
      tasks: [],
      warmJobId: null,
    };
    const gpu = {
      id: 'gpu-GPU-1',
      device: { kind: 'gpu' as const, name: 'NVIDIA H200', uuid: 'GPU-1' },
      state: 'idle' as const,
      tasks: [],
      warmJobId: null,
    };
    const now = 1_001_000;
    expect(liveRenderSlots([{ ...base, slots: [control, ...base.slots] }], now)).toBe(1);
    expect(
      liveRenderSlots(
        [
          { ...base, slots: [control, ...base.slots] },
          { ...base, id: 'w:2', slots: [control, gpu, gpu] },
        ],
        now,
      ),
    ).toBe(3);
    expect(
      liveRenderSlots(
        [
          { ...base, state: 'stopped' },
          { ...base, id: 'lost', heartbeatAt: 0 },
        ],
        now,
      ),
    ).toBe(0);
    expect(liveRenderSlots([], now)).toBe(0);
  });
});
