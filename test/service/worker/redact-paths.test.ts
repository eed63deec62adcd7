import { describe, expect, it } from 'vitest';
import { redactPaths } from '../../../service/worker/runtime/failed-reason.js';

describe('failedReason redaction', () => {
  it('replaces worker folders in every string of a failedReason, and leaves the rest as it was', () => {
    const reason = {
      name: 'RETRIES_EXHAUSTED',
      type: 'RENDER_FAILED' as const,
      errorDetails: {
        message: 'Blender exited with code 1',
        frame: 7,
        lastLines: ["Saved: '/srv/rb/work/job-1/attempts/0/frames/f_0006.png'", 'Fra:7 Mem:12M'],
        nested: { at: '/srv/rb/work' },
      },
    };
    expect(redactPaths(reason, ['/srv/rb/work'])).toEqual({
      ...reason,
      errorDetails: {
        ...reason.errorDetails,
        lastLines: ["Saved: '<worker>/job-1/attempts/0/frames/f_0006.png'", 'Fra:7 Mem:12M'],
        nested: { at: '<worker>' },
      },
    });
    expect(redactPaths(reason, [])).toBe(reason);
  });
});
