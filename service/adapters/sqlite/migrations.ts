// The SQLite schema's migrations, in order: each runs once per database file (kysely's Migrator
// records them), and a migration never changes once released, so old files upgrade step by step.
// Each is a module of migrations/, named as it is recorded; a new one is a new module listed here.
import type { Migration } from 'kysely';
import { m001Initial } from './migrations/001-initial.js';
import { m002JobCounts } from './migrations/002-job-counts.js';
import { m003JobPreviewKey } from './migrations/003-job-preview-key.js';
import { m004Webhooks } from './migrations/004-webhooks.js';
import { m005TaskDeps } from './migrations/005-task-deps.js';
import { m006JobDeleteAfter } from './migrations/006-job-delete-after.js';
import { m007BlocklistLeases } from './migrations/007-blocklist-leases.js';
import { m008TaskClaimOrder } from './migrations/008-task-claim-order.js';
import { m009TaskDepsByDep } from './migrations/009-task-deps-by-dep.js';
import { m010Blobs } from './migrations/010-blobs.js';
import { m011Dashboard } from './migrations/011-dashboard.js';
import { m012Workers } from './migrations/012-workers.js';
import { m013JobRequeues } from './migrations/013-job-requeues.js';
import { m014WorkerTokens } from './migrations/014-worker-tokens.js';
import { m015JobOutputBytes } from './migrations/015-job-output-bytes.js';
import { m016FrameStats } from './migrations/016-frame-stats.js';
import { m017AnalysisCache } from './migrations/017-analysis-cache.js';
import { m018TaskScheduling } from './migrations/018-task-scheduling.js';
import { m019DependencyWaits } from './migrations/019-dependency-waits.js';

export const migrations: Record<string, Migration> = {
  '001_initial': m001Initial,
  '002_job_counts': m002JobCounts,
  '003_job_preview_key': m003JobPreviewKey,
  '004_webhooks': m004Webhooks,
  '005_task_deps': m005TaskDeps,
  '006_job_delete_after': m006JobDeleteAfter,
  '007_blocklist_leases': m007BlocklistLeases,
  '008_task_claim_order': m008TaskClaimOrder,
  '009_task_deps_by_dep': m009TaskDepsByDep,
  '010_blobs': m010Blobs,
  '011_dashboard': m011Dashboard,
  '012_workers': m012Workers,
  '013_job_requeues': m013JobRequeues,
  '014_worker_tokens': m014WorkerTokens,
  '015_job_output_bytes': m015JobOutputBytes,
  '016_frame_stats': m016FrameStats,
  '017_analysis_cache': m017AnalysisCache,
  '018_task_scheduling': m018TaskScheduling,
  '019_dependency_waits': m019DependencyWaits,
};
