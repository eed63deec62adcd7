// Task ids and payloads come from one module: ids derived from the job (a repeated enqueue adds
// nothing) and each kind's payload checked by its schema before a worker acts on it.
import { describe, expect, it } from 'vitest';
import { BadTaskPayloadError, newTasks, taskIds, taskPayload } from '../../../service/domain/tasks.js';
import { requirementsOf } from '../../../service/worker/runtime/placement.js';
import type { Task } from '../../../service/ports/tasks.js';

const chunk = { index: 2, start: 5, end: 9, step: 2, frames: [5, 7, 9], requires: { blender: '3.4' } };

describe('tasks', () => {
  it('derives every id from the job, so enqueueing twice names the same task', () => {
    expect(newTasks.validate('j')).toEqual({ id: 'validate:j', jobId: 'j', kind: 'validate' });
    expect(newTasks.render('j').id).toBe(newTasks.render('j').id);
    expect(newTasks.chunk('j', chunk)).toMatchObject({
      id: taskIds.chunk('j', 2),
      kind: 'render-chunk',
      payload: chunk,
    });
    expect(newTasks.finalize('j', ['a', 'b'])).toEqual({
      id: 'finalize:j',
      jobId: 'j',
      kind: 'finalize',
      after: ['a', 'b'],
    });
  });

  it('refuses to build a chunk task without frames', () => {
    expect(() => newTasks.chunk('j', { ...chunk, frames: [] })).toThrow();
  });

  it("reads a payload through its kind's schema and names the task when it cannot", () => {
    const task: Task = { id: 'chunk:j:2', jobId: 'j', kind: 'render-chunk', payload: chunk, attempts: 1 };
    expect(taskPayload({ ...task, kind: 'render-chunk' })).toEqual(chunk);
    const bad = { ...task, kind: 'render-chunk' as const, payload: { index: 2, start: '5' } };
    expect(() => taskPayload(bad)).toThrow(BadTaskPayloadError);
    expect(() => taskPayload(bad)).toThrow(/chunk:j:2 \(render-chunk\).*frames/s);
  });

  it('places a task whose requirements are unreadable as one that needs nothing', () => {
    const base: Task = { id: 't', jobId: 'j', kind: 'render-chunk', payload: {}, attempts: 1 };
    expect(requirementsOf({ ...base, payload: { requires: { blender: '3.4', minimumRamGiB: 8 } } })).toEqual({
      blender: '3.4',
      minimumRamGiB: 8,
    });
    expect(requirementsOf({ ...base, payload: { requires: { blender: 34 } } })).toEqual({});
  });
});
