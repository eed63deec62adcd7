// The row a worker records for a finished frame (frame-recorder.ts): on the CPU, Blender's RAM
// peak; on a GPU, the device's own peak (billing's device report says which, as for billing); the
// slot named as task lists name it, the build this machine renders the planned version with.
import { describe, expect, it } from 'vitest';
import { frameStat, type FinishedFrame } from '../../../service/worker/render/frame-recorder.js';

const builds = [
  { binary: '/opt/blender-4.2.1/blender', version: { major: 4, minor: 2, patch: 1, text: '4.2.1' }, isDefault: true },
  { binary: '/opt/blender-4.2.3/blender', version: { major: 4, minor: 2, patch: 3, text: '4.2.3' }, isDefault: false },
  { binary: '/opt/blender-3.6/blender', version: { major: 3, minor: 6, patch: 0, text: '3.6.0' }, isDefault: false },
];
const frame = (over: Partial<FinishedFrame>): FinishedFrame => ({
  jobId: 'j',
  frame: 7,
  attempt: 2,
  seconds: 3.14159,
  memory: { hostPeakBytes: 500, devicePeakBytes: 9000 },
  device: undefined,
  lane: 'cpu-0',
  plannedVersion: '4.2',
  ...over,
});
const at = new Date('2026-01-01T00:00:00.000Z');

describe('frameStat', () => {
  it('records RAM on the CPU, with the newest build of the planned version', () => {
    expect(frameStat({ builds, workerName: 'render-1' }, frame({}), at)).toEqual({
      jobId: 'j',
      frame: 7,
      attempt: 2,
      renderSeconds: 3.142,
      peakMemoryBytes: 500,
      device: 'CPU',
      slot: 'render-1/cpu-0',
      blenderVersion: '4.2.3',
      finishedAt: '2026-01-01T00:00:00.000Z',
    });
  });

  it('records the device peak on a GPU, and nothing where the device printed none', () => {
    const gpu = frame({ device: { requested: 'OPTIX', device: 'OPTIX', gpus: 1 }, lane: 'gpu-GPU-1' });
    expect(frameStat({ builds, workerName: 'render-1' }, gpu, at)).toMatchObject({
      device: 'OPTIX',
      peakMemoryBytes: 9000,
      slot: 'render-1/gpu-GPU-1',
    });
    expect(
      frameStat({ builds }, { ...gpu, memory: { hostPeakBytes: 500, devicePeakBytes: null } }, at).peakMemoryBytes,
    ).toBeNull();
  });

  it('counts a GPU slot that fell back to the CPU as the CPU', () => {
    const fell = frame({ device: { requested: 'CUDA', device: 'CPU', gpus: 0 }, lane: 'gpu-GPU-1' });
    expect(frameStat({ builds, workerName: 'w' }, fell, at)).toMatchObject({ device: 'CPU', peakMemoryBytes: 500 });
  });
});
