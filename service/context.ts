import type { ServiceConfig } from './config.js';
import type { JobStore, KeyStore, ObjectStorage, TaskQueue } from './ports.js';

/** What routes need: the config and the ports, passed in (no module-level singletons). */
export interface ServiceContext {
  config: ServiceConfig;
  jobs: JobStore;
  storage: ObjectStorage;
  queue: TaskQueue;
  keys: KeyStore;
}
