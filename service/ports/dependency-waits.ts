// Waiting for other jobs without polling (extension scheduling, `dependsOn`): a planning task is
// handed back to the queue naming the jobs it waits for, and the queue makes it claimable again
// the moment one of them ends. Declared for the two consumers: the service's wiring, which hears
// from the job store that a job ended and tells the queue, and the worker's release (TaskLeases).

/** The queue's side: waking the tasks that wait for a job. */
export interface DependencyWakes {
  /**
   * `jobId` reached a final state (completed, failed, canceled): every task released waiting for
   * it (TaskLeases.release's `waitFor`) becomes claimable now. The job is also recorded as ended,
   * so a release that names it afterwards (its check read the job just before it ended) is
   * claimable at once instead of waiting out its delay. Idempotent; durable with the queue.
   */
  jobEnded(jobId: string): Promise<void>;
}

/** The job store's side: hearing that a job ended, whoever moved it (a route, a local or remote worker). */
export interface JobEndFeed {
  /**
   * Calls `listener` after each move of a job to a final state that this store wrote, once the
   * write is durable; the move's caller waits for it. The listener handles its own errors.
   */
  onJobEnded(listener: (jobId: string) => Promise<void>): void;
}
