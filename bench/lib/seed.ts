// Real job records for benchmarks, written straight through the embedded store (10,000 HTTP
// uploads would take minutes and measure the upload, not what the benchmark is about).
import { randomBytes } from 'node:crypto';
import { defaultConfig } from '../../service/config-defaults.js';
import { createApiKey } from '../../service/domain/api-keys.js';
import { newJobRecord, uploadKey } from '../../service/domain/jobs.js';
import { openLocalStack } from '../../service/stack.js';
import type { UploadRecord } from '../../service/ports/jobs.js';

/** Seeds `count` jobs of one workspace `bench` in a SQLite data folder; returns its API key and the job ids. */
export async function seedJobs(dataDir: string, count: number): Promise<{ key: string; ids: string[] }> {
  const stack = await openLocalStack(defaultConfig({ dataDir }));
  try {
    const { key, record } = await createApiKey(stack.deps.keys, { workspace: 'bench', label: 'bench' });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const slug = `up_${randomBytes(16).toString('base64url')}`;
      const now = new Date().toISOString();
      const upload: UploadRecord = {
        slug,
        workspaceId: record.workspaceId,
        userId: record.userId,
        fileName: 'scene.blend',
        fileType: 'blend',
        objectKey: uploadKey(record.workspaceId, slug, 'scene.blend'),
        expiresAt: now,
        createdAt: now,
        completedAt: null,
        size: null,
        sha256: null,
        jobId: null,
      };
      await stack.deps.jobs.createUpload(upload);
      await stack.deps.jobs.completeUpload(slug, 1_048_576, null);
      const rec = newJobRecord({ ...upload, completedAt: now, size: 1_048_576 }, undefined);
      await stack.deps.jobs.createJobFromUpload(slug, rec);
      ids.push(rec.job.id);
    }
    return { key, ids };
  } finally {
    await stack.close();
  }
}
