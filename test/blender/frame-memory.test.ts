// Peak memory per frame as the progress parser reads it from Blender's lines (frame statistics).
// CPU lines are a real Blender 3.4 capture (test/fixtures/logs/) and Blender 5.2's logger lines;
// no GPU is lent to this machine, so the GPU lines are Cycles' documented shape with a device's
// figures (the device peak is the field after the time, as on the CPU).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BlenderLogParser, type FrameMemory } from '../../blender/render/progress-parser.js';

const MiB = 1024 * 1024;

/** Each finished frame with the memory the parser read for it. */
function framesOf(text: string): { frame: number; memory: FrameMemory }[] {
  const p = new BlenderLogParser();
  const out: { frame: number; memory: FrameMemory }[] = [];
  for (const line of text.split('\n'))
    for (const ev of p.line(line))
      if (ev.type === 'frameFinished') out.push({ frame: ev.frame, memory: p.lastFrameMemory });
  return out;
}

describe('peak memory per frame', () => {
  it("reads Blender's RAM peak and Cycles' device peak of each frame of a real CPU render", () => {
    const frames = framesOf(readFileSync(new URL('../fixtures/logs/blender-3.4-cycles.txt', import.meta.url), 'utf8'));
    expect(frames.map((f) => f.frame)).toEqual([1, 2, 3]);
    // Frame 1's lines end at `Mem:... (Peak 10.47M)` and the device's `Peak:0.86M`.
    expect(frames[0]!.memory).toEqual({
      hostPeakBytes: Math.round(10.47 * MiB),
      devicePeakBytes: Math.round(0.86 * MiB),
    });
  });

  it("reads a GPU frame's device peak apart from the host's, in any unit", () => {
    const frames = framesOf(
      [
        'Fra:12 Mem:230.52M (Peak 231.04M) | Time:00:01.02 | Mem:5120.00M, Peak:7168.25M | Scene, ViewLayer ' +
          '| Sample 1/128',
        'Fra:12 Mem:231.00M (Peak 240.00M) | Time:00:09.50 | Mem:2.5G, Peak:7.5G | Scene, ViewLayer | Sample 128/128',
        ' Time: 00:09.61 (Saving: 00:00.11)',
      ].join('\n'),
    );
    expect(frames).toEqual([
      { frame: 12, memory: { hostPeakBytes: 240 * MiB, devicePeakBytes: Math.round(7.5 * 1024 * MiB) } },
    ]);
  });

  it("reads Blender 5.x's single Mem field, and starts each frame afresh", () => {
    const frames = framesOf(
      [
        '00:01.659  render           | Fra: 2 | Mem: 64M | Sample 0/4',
        '00:01.662  render           | Fra: 2 | Mem: 96M | Sample 4/4',
        '00:01.664  render           | Time: 00:00.27 (Saving: 00:00.18)',
        '00:01.700  render           | Fra: 3 | Mem: 10M | Sample 4/4',
        '00:01.800  render           | Time: 00:00.10 (Saving: 00:00.01)',
      ].join('\n'),
    );
    expect(frames).toEqual([
      { frame: 2, memory: { hostPeakBytes: 96 * MiB, devicePeakBytes: null } },
      { frame: 3, memory: { hostPeakBytes: 10 * MiB, devicePeakBytes: null } },
    ]);
  });

  it('says nothing about memory where Blender printed none', () => {
    expect(
      framesOf('Fra:1 | Time:00:00.01 | Scene, ViewLayer | Sample 1/1\n Time: 00:00.02 (Saving: 00:00.00)'),
    ).toEqual([{ frame: 1, memory: { hostPeakBytes: null, devicePeakBytes: null } }]);
  });
});
