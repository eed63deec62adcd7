// What every role of the TaskQueue conformance suite opens per test, typed by the roles the test uses.
import type { TaskQueue } from '../../../../service/ports/tasks.js';

export interface QueueHarness<Q = TaskQueue> {
  queue: Q;
  /** Closes and reopens the same backing store: what a service restart does. */
  reopen(): Promise<Q>;
  /**
   * A second, independent handle on the same data: another process sharing it (the service and a
   * worker beside it). Closed by close(). Default: none; concurrent claims then all go through `queue`.
   */
  other?(): Promise<Q>;
  close(): Promise<void>;
}
