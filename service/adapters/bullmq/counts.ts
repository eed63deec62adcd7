// The BullMQ task queue's counts: a waiting task is in the adapter's own claim order (rqn), held
// (dependencies, a paused job) or in a BullMQ lane (a retry, a task being handed over).
import type { Redis } from 'ioredis';
import { TASK_KINDS, type TaskKind } from '../../ports/tasks.js';
import type { KeySpace } from './keys.js';
import type { Lane } from './lanes.js';
import type { QueueScripts } from './scripts.js';

export async function queueCounts(
  client: Redis,
  keys: KeySpace,
  lanes: Map<TaskKind, Lane>,
): Promise<{ queued: number; running: number; done: number; failed: number }> {
  const [held, paused, ordered, ...perKind] = await Promise.all([
    client.scard(`${keys.own}held`),
    client.scard(`${keys.own}paused`),
    client.hvals(`${keys.own}rqn`),
    ...[...lanes.values()].map((l) =>
      l.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active', 'completed', 'failed'),
    ),
  ]);
  const sum = (...types: string[]) => perKind.reduce((n, c) => n + types.reduce((m, t) => m + (c[t] ?? 0), 0), 0);
  return {
    queued: held + paused + ordered.reduce((n, v) => n + Number(v), 0) + sum('waiting', 'delayed', 'prioritized'),
    running: sum('active'),
    done: sum('completed'),
    failed: sum('failed'),
  };
}

export async function kindCounts(
  client: Redis,
  keys: KeySpace,
  lanes: Map<TaskKind, Lane>,
  scripts: QueueScripts,
): Promise<Record<TaskKind, { queued: number; running: number }>> {
  const kinds = [...lanes.keys()];
  const [heldKinds, ordered, ...perKind] = await Promise.all([
    scripts.heldKinds(),
    client.hgetall(`${keys.own}rqn`),
    ...kinds.map((k) => lanes.get(k)!.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active')),
  ]);
  const out = Object.fromEntries(TASK_KINDS.map((k) => [k, { queued: 0, running: 0 }])) as Record<
    TaskKind,
    { queued: number; running: number }
  >;
  kinds.forEach((k, i) => {
    const c = perKind[i]!;
    out[k] = {
      queued: Number(ordered[k] ?? 0) + (c.waiting ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0),
      running: c.active ?? 0,
    };
  });
  // Held tasks (a finalize behind its chunks, a paused job's) are queued too, though BullMQ has not got them.
  for (const k of heldKinds) if (out[k as TaskKind]) out[k as TaskKind].queued++;
  return out;
}
