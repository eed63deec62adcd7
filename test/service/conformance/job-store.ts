// One conformance suite for every JobStore adapter (SQLite, PostgreSQL), split by the roles
// consumers depend on (service/ports/): each role's tests use the adapter only as that role
// (plus what they need to set up or observe state), so a role can be checked on its own.
import { describe } from 'vitest';
import type { JobStore } from '../../../service/ports/jobs.js';
import type { RequeueStore } from '../../../service/ports/requeues.js';
import type { StoreHarness } from './job-store/helpers.js';
import { jobRecordsConformance } from './job-store/job-records.js';
import { progressStoreConformance } from './job-store/progress.js';
import { jobReadModelConformance } from './job-store/read-model.js';
import { requeueStoreConformance } from './job-store/requeues.js';
import { schedulingFieldsConformance } from './job-store/scheduling-fields.js';
import { uploadStoreConformance } from './job-store/uploads.js';

export function jobStoreConformance(name: string, open: () => Promise<StoreHarness<JobStore & RequeueStore>>): void {
  describe(`JobStore conformance: ${name}`, () => {
    uploadStoreConformance(open);
    jobRecordsConformance(open);
    schedulingFieldsConformance(open);
    progressStoreConformance(open);
    jobReadModelConformance(open);
    requeueStoreConformance(open);
  });
}
