// The embedded defaults: SQLite state and filesystem objects under the data folder.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FsObjectStorage } from './adapters/fs-storage/fs-storage.js';
import { openSqlite } from './adapters/sqlite/db.js';
import { SqliteJobStore } from './adapters/sqlite/job-store.js';
import { SqliteKeyStore } from './adapters/sqlite/key-store.js';
import { SqliteLeaseStore } from './adapters/sqlite/lease-store.js';
import { SqliteTaskQueue } from './adapters/sqlite/task-queue.js';
import { openWebhookStore } from './adapters/sqlite/webhook-store.js';
import { SqliteBlobStore } from './adapters/sqlite/blob-store.js';
import { blobUrlSecret } from './adapters/sql/blob-secret.js';
import { SqlSessionStore } from './adapters/sql/session-store.js';
import { SqlWorkerRegistry } from './adapters/sql/worker-registry.js';
import { SqlStorageUsage } from './adapters/sql/storage-usage.js';
import type { StorageUsage } from './ports/usage.js';
import { SqlWorkerTokenStore } from './adapters/sql/worker-token-store.js';
import { SqlFrameStats } from './adapters/sql/frame-stats.js';
import type { FrameStatsStore } from './ports/frame-stats.js';
import { SqlAnalysisCache } from './adapters/sql/analysis-cache.js';
import type { AnalysisCacheStore } from './ports/analysis-cache.js';
import type { BlobStore } from './ports/blobs.js';
import { UrlSigner } from './adapters/fs-storage/url-signer.js';
import type { JobStore } from './ports/jobs.js';
import type { RequeueStore } from './ports/requeues.js';
import type { KeyStore } from './ports/keys.js';
import type { LeaseStore } from './ports/leases.js';
import type { SessionStore } from './ports/sessions.js';
import type { TaskQueue } from './ports/tasks.js';
import type { DependencyWakes, JobEndFeed } from './ports/dependency-waits.js';
import type { WorkerRegistry } from './ports/workers.js';
import type { WorkerTokenStore } from './ports/worker-tokens.js';
import type { WebhookStore } from './webhooks/ports.js';

/** The stores of one state engine (SQLite or PostgreSQL). */
export interface StateEngine {
  kind: 'sqlite' | 'postgres';
  /** The job store, which also links requeues (extension job-requeue) and tells of jobs that ended. */
  jobs: JobStore & RequeueStore & JobEndFeed;
  keys: KeyStore;
  /** The database-backed task queue (used when no Redis is configured). */
  queue: TaskQueue & DependencyWakes;
  webhooks: WebhookStore;
  leases: LeaseStore;
  /** The blob index of the content-addressed upload extension. */
  blobs: BlobStore;
  /** Dashboard sessions. */
  sessions: SessionStore;
  /** The secret blob part URLs are signed with, shared by every instance on this database. */
  blobUrlSecret(): Promise<Buffer>;
  /** Each worker process's latest report (extension workers, /readyz). */
  workers: WorkerRegistry;
  /** Per-worker tokens of the worker API (hashed). */
  workerTokens: WorkerTokenStore;
  /** Per-frame statistics (extension frame-stats). */
  frameStats: FrameStatsStore;
  /** Scene analyses validation reuses (service/worker/analysis-cache). */
  analysisCache: AnalysisCacheStore;
  /** Bytes each workspace keeps stored, for its storage quota. */
  usage: StorageUsage;
  /** Resolves once the database answered a trivial query (/readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

async function ensurePrivateDir(dataDir: string): Promise<string> {
  const dir = path.resolve(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  return dir;
}

/** The SQLite database's file name inside the data folder (admin commands look for it before opening). */
export const SQLITE_FILE_NAME = 'renderbridge.sqlite';

/** SQLite state in `<dataDir>/renderbridge.sqlite`. */
export async function openLocalState(dataDir: string): Promise<StateEngine> {
  const dir = await ensurePrivateDir(dataDir);
  const sqlite = await openSqlite(path.join(dir, SQLITE_FILE_NAME));
  return {
    kind: 'sqlite',
    jobs: new SqliteJobStore(sqlite),
    keys: new SqliteKeyStore(sqlite),
    queue: new SqliteTaskQueue(sqlite),
    webhooks: openWebhookStore(sqlite),
    leases: new SqliteLeaseStore(sqlite.db),
    blobs: new SqliteBlobStore(sqlite),
    sessions: new SqlSessionStore(sqlite.db),
    blobUrlSecret: () => blobUrlSecret(sqlite.db),
    workers: new SqlWorkerRegistry(sqlite.db),
    workerTokens: new SqlWorkerTokenStore(sqlite.db),
    frameStats: new SqlFrameStats(sqlite.db),
    analysisCache: new SqlAnalysisCache(sqlite.db),
    usage: new SqlStorageUsage(sqlite.db),
    ping: async () => void sqlite.raw.prepare('select 1').get(),
    close: () => sqlite.close(),
  };
}

/** The signing secret survives restarts (so issued URLs stay valid) and is readable by the owner only. */
async function loadOrCreateSecret(file: string): Promise<Buffer> {
  try {
    const hex = (await readFile(file, 'utf8')).trim();
    if (/^[0-9a-f]{64,}$/.test(hex)) return Buffer.from(hex, 'hex');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = randomBytes(32);
  await writeFile(file, secret.toString('hex'), { mode: 0o600, flag: 'wx' }).catch(
    async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    },
  );
  return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
}

/** Objects under `<dataDir>/objects`, served by the service itself through HMAC-signed URLs. */
export async function openFsStorage(
  dataDir: string,
  publicUrl: () => string,
): Promise<{ storage: FsObjectStorage; signer: UrlSigner; root: string }> {
  const dir = await ensurePrivateDir(dataDir);
  const signer = new UrlSigner(await loadOrCreateSecret(path.join(dir, 'url-signing.key')));
  const root = path.join(dir, 'objects');
  const storage = new FsObjectStorage(root, signer, publicUrl);
  await storage.init();
  return { storage, signer, root };
}
