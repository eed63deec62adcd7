import type { ServiceConfig } from './config.js';
import type { JobStore } from './ports/jobs.js';
import type { KeyStore } from './ports/keys.js';
import type { ObjectStorage } from './ports/storage.js';
import type { TaskScheduling, TaskSubmitter } from './ports/tasks.js';
import type { StorageQuota } from './http/storage-quota.js';

/** What routes need: the config and the ports, passed in (no module-level singletons). */
export interface ServiceContext {
  config: ServiceConfig;
  jobs: JobStore;
  storage: ObjectStorage;
  /** Submitting tasks, and scheduling a job's queued ones (extension scheduling). */
  queue: TaskSubmitter & TaskScheduling;
  keys: KeyStore;
  /** Tells an in-process worker at once what the routes just did (it would notice by polling). */
  events?: JobEvents;
  /** Each workspace's storage quota, checked where new bytes come in. Default none: unlimited. */
  quota?: StorageQuota;
  /** The clock upload URLs expire by, epoch ms. Default Date.now (tests move it past an expiry). */
  clock?: () => number;
}

export interface JobEvents {
  /** A task was enqueued: idle lanes may claim it now. */
  enqueued(): void;
  /** A job was canceled: its running work stops now. */
  canceled(jobId: string): void;
}
