// One conformance suite for every TaskQueue adapter (SQLite, PostgreSQL, BullMQ), split by the
// roles consumers depend on (service/ports/): each role's tests use the adapter only as that role
// (plus what they need to set up or observe state), so a role can be checked on its own.
import { describe } from 'vitest';
import type { TaskQueue } from '../../../service/ports/tasks.js';
import type { WaitingPriority } from '../../../service/ports/waiting-priority.js';
import { failureLedgerConformance } from './task-queue/failure-ledger.js';
import type { QueueHarness } from './task-queue/helpers.js';
import { queueHousekeepingConformance } from './task-queue/housekeeping.js';
import { queueLoadConformance } from './task-queue/queue-load.js';
import { taskLeasesConformance } from './task-queue/leases.js';
import { taskSubmitterConformance } from './task-queue/submitter.js';
import { taskRunReaderConformance } from './task-queue/task-runs.js';
import { taskSchedulingConformance } from './task-queue/scheduling.js';
import { queueOrderConformance } from './task-queue/queue-order.js';
import { waitingPriorityConformance } from './task-queue/waiting-priority.js';
import { dependencyWakesConformance } from './task-queue/dependency-waits.js';
import { enqueueManyConformance } from './task-queue/enqueue-many.js';
import { handBackConformance } from './task-queue/hand-backs.js';
import type { DependencyWakes } from '../../../service/ports/dependency-waits.js';

export function taskQueueConformance(
  name: string,
  open: () => Promise<QueueHarness<TaskQueue & WaitingPriority & DependencyWakes>>,
): void {
  describe(`TaskQueue conformance: ${name}`, () => {
    taskSubmitterConformance(open);
    enqueueManyConformance(open);
    taskLeasesConformance(name, open);
    failureLedgerConformance(open);
    queueHousekeepingConformance(open);
    taskRunReaderConformance(open);
    queueLoadConformance(open);
    taskSchedulingConformance(open);
    queueOrderConformance(open);
    waitingPriorityConformance(open);
    dependencyWakesConformance(open);
    handBackConformance(open);
  });
}
