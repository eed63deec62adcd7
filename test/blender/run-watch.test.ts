// The limits of a running Blender (blender/run-watch.ts) on an injected clock: vitest's fake timers
// stand in for setTimeout and performance.now, so an hour passes in no time and never late.
// No process is started: a watch without a pid records why it would stop the group, and that is
// what these tests read.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunWatch } from '../../blender/run-watch.js';

beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
afterEach(() => void vi.useRealTimers());

describe('RunWatch', () => {
  it('stops a run that prints nothing for its idle limit, counting from its last line', () => {
    const watch = new RunWatch({ totalMs: 0, idleMs: 500 }, 1000);
    watch.arm(watch.limits);
    vi.advanceTimersByTime(400);
    watch.output();
    vi.advanceTimersByTime(400);
    expect(watch.stopReason).toBeUndefined();
    vi.advanceTimersByTime(101);
    expect(watch.stopReason).toBe('idle');
  });

  it('stops a run at its total limit however much it prints', () => {
    const watch = new RunWatch({ totalMs: 1000, idleMs: 500 }, 1000);
    watch.arm(watch.limits);
    for (let t = 0; t < 999; t += 100) {
      watch.output();
      vi.advanceTimersByTime(100);
    }
    expect(watch.stopReason).toBe('timeout');
  });

  it('limits of 0 never fire: a warm Blender waiting for its next frame is no hang', () => {
    const watch = new RunWatch({ totalMs: 60_000, idleMs: 500 }, 1000);
    watch.arm(watch.limits);
    vi.advanceTimersByTime(300);
    // The frame is done: the worker disarms the limits while Blender waits for the next command.
    watch.arm({ totalMs: 0, idleMs: 0 });
    vi.advanceTimersByTime(3_600_000);
    expect(watch.stopReason).toBeUndefined();
    // The next frame arms them again, counting from then.
    watch.arm({ totalMs: 0, idleMs: 500 });
    vi.advanceTimersByTime(499);
    expect(watch.stopReason).toBeUndefined();
    vi.advanceTimersByTime(2);
    expect(watch.stopReason).toBe('idle');
  });
});
