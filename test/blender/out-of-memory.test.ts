// Blender's own words for running out of memory, as recorded from Cycles, the GPU runtimes and
// Blender's allocator, and the highest memory figure of its progress lines.
import { describe, expect, it } from 'vitest';
import { highestMemoryFigure, outOfMemoryLine } from '../../blender/out-of-memory.js';

describe('out of memory in Blender output', () => {
  it.each([
    'System is out of GPU memory',
    'Error: Out of memory in cuMemAlloc(&device_pointer, size), line 123',
    'CUDA error: Out of memory in cuLaunchKernel(cuPathTrace, xblocks, yblocks, 1, xthreads, ythreads, 1, 0, 0)',
    "terminate called after throwing an instance of 'std::bad_alloc'",
    'Malloc returns null: len=8589934592 in Image buffer, total 3145728',
    'hipErrorOutOfMemory in hipMalloc',
  ])('tells "%s"', (line) => {
    expect(outOfMemoryLine(['Fra:1 Mem:9.16M (Peak 10.87M) | Time:00:00.01', line])).toBe(line);
  });

  it('a run that failed for another reason says nothing of memory', () => {
    expect(outOfMemoryLine(['Error: Cannot read file "/p/scene.blend": No such file', 'Blender quit'])).toBeUndefined();
  });

  it('the highest figure of Blender (Mem/Peak) and Cycles (device Mem/Peak) lines, in bytes', () => {
    expect(
      highestMemoryFigure([
        'Fra:1 Mem:266.04M (Peak 777.21M) | Time:00:07.35 | Mem:256.76M, Peak:256.76M | Scene, ViewLayer | Sample 0/4',
        'Fra:1 Mem:9.16M (Peak 10.87M) | Time:00:00.01 | Mem:0.00M, Peak:0.00M | Scene',
      ]),
    ).toBe(Math.round(777.21 * 2 ** 20));
    expect(highestMemoryFigure(['Blender quit'])).toBeNull();
  });
});
