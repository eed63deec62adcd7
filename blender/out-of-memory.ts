// How a Blender run that ran out of memory shows in its output: Cycles' and the GPU runtimes'
// own words when an allocation failed and Blender could still say so, and the highest memory
// figure it printed before it died (a process the kernel killed says nothing: the worker then
// reads the cgroup's OOM-kill counter, service/worker/runtime/memory-cgroup.ts).

/**
 * Lines of a run that failed for memory: Cycles (`Error: Out of memory`, `System is out of GPU
 * memory`), CUDA/HIP (`CUDA error: Out of memory in cuMemAlloc`, `hipErrorOutOfMemory`),
 * Blender's allocator (`Malloc returns null`, `Memory allocation failed`) and C++ (`std::bad_alloc`).
 */
export const OUT_OF_MEMORY_LINE =
  /out of (?:gpu |device |host )?memory|CUDA_ERROR_OUT_OF_MEMORY|hipErrorOutOfMemory|std::bad_alloc|[MC]alloc returns null|Memory allocation failed/i;

/** The first line saying the run ran out of memory, or undefined. */
export function outOfMemoryLine(lines: readonly string[]): string | undefined {
  return lines.find((l) => OUT_OF_MEMORY_LINE.test(l));
}

const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };
/** Every `Mem:` and `Peak` figure of a progress line (`Mem:9.35M (Peak 9.42M)`, `Mem:0.78M, Peak:0.78M`). */
const MEMORY_FIGURE = /\b(?:Mem|Peak):?\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\b/g;

/** The highest memory figure Blender printed in `lines` (its own allocations or the device's), bytes; null: none. */
export function highestMemoryFigure(lines: readonly string[]): number | null {
  let top: number | null = null;
  for (const line of lines) {
    for (const m of line.matchAll(MEMORY_FIGURE)) {
      const n = Math.round(Number(m[1]) * (SIZE_UNITS[m[2] ?? ''] ?? 1));
      if (top === null || n > top) top = n;
    }
  }
  return top;
}
