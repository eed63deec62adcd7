import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { FsObjectStorage } from './adapters/fs-storage/fs-storage.js';
import { openSqlite, type DB } from './adapters/sqlite/db.js';
import { SqliteJobStore } from './adapters/sqlite/job-store.js';
import { SqliteKeyStore } from './adapters/sqlite/key-store.js';
import { SqliteTaskQueue } from './adapters/sqlite/task-queue.js';
import { openWebhookStore } from './adapters/sqlite/webhook-store.js';
import type { WebhookStore } from './webhooks/ports.js';
import type { AppDeps } from './app.js';
import type { ServiceConfig } from './config.js';
import { UrlSigner } from './http/signing.js';

/** The signing secret survives restarts (so issued URLs stay valid) and is readable by the owner only. */
async function loadOrCreateSecret(file: string): Promise<Buffer> {
  try {
    const hex = (await readFile(file, 'utf8')).trim();
    if (/^[0-9a-f]{64,}$/.test(hex)) return Buffer.from(hex, 'hex');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = randomBytes(32);
  await writeFile(file, secret.toString('hex'), { mode: 0o600, flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
}

export interface LocalStack {
  deps: Omit<AppDeps, 'logger'>;
  /** Webhook endpoints and the delivery outbox (onRenderComplete). */
  webhooks: WebhookStore;
  db: Kysely<DB>;
  /** Where the service is reachable; set once it listens (port 0 picks one). */
  setPublicUrl(url: string): void;
  close(): Promise<void>;
}

/** The embedded defaults: SQLite state, filesystem objects and a SQLite-backed task queue under dataDir. */
export async function openLocalStack(config: ServiceConfig): Promise<LocalStack> {
  const dir = path.resolve(config.dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const signer = new UrlSigner(await loadOrCreateSecret(path.join(dir, 'url-signing.key')));
  const sqlite = await openSqlite(path.join(dir, 'renderbridge.sqlite'));
  let publicUrl = config.publicUrl ?? `http://${config.host}:${config.port}`;
  const root = path.join(dir, 'objects');
  const storage = new FsObjectStorage(root, signer, () => publicUrl);
  await storage.init();
  return {
    db: sqlite.db,
    webhooks: openWebhookStore(sqlite),
    deps: {
      config,
      jobs: new SqliteJobStore(sqlite),
      storage,
      queue: new SqliteTaskQueue(sqlite.db),
      keys: new SqliteKeyStore(sqlite),
      fsStorage: { storage, signer, root },
    },
    setPublicUrl(url: string) {
      if (!config.publicUrl) publicUrl = url.replace(/\/+$/, '');
    },
    close: () => sqlite.close(),
  };
}

/** The key store alone, for admin commands run beside (or instead of) a running service. */
export async function openKeyStore(dataDir: string): Promise<{ keys: SqliteKeyStore; close(): Promise<void> }> {
  const dir = path.resolve(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const sqlite = await openSqlite(path.join(dir, 'renderbridge.sqlite'));
  return { keys: new SqliteKeyStore(sqlite), close: () => sqlite.close() };
}
