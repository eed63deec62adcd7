// Per-worker tokens of the internal worker API: made here, stored hashed (ports/worker-tokens.ts).
import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { WorkerTokenAdmin, WorkerTokenRecord } from '../ports/worker-tokens.js';

/** Every worker token starts with this, so a leaked one is recognisable (and never taken for an API key). */
export const WORKER_TOKEN_PREFIX = 'rbw_';

/**
 * A worker name: it starts the worker's lease and heartbeat ids (`name:pid:lane`), so it may not
 * hold `:`; kept to characters that are safe in logs, ids and shell commands.
 */
export const WORKER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** Tokens carry 256 random bits, so one fast hash is as strong as a slow KDF and keeps auth cheap. */
export function hashWorkerToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/** Why `name` cannot name a worker, or undefined when it can. */
export function workerNameProblem(name: string): string | undefined {
  if (WORKER_NAME_PATTERN.test(name)) return undefined;
  return (
    `"${name}" is not a worker name: use 1-63 letters, digits, ".", "_" or "-", starting with a letter or ` +
    `digit (no ":")`
  );
}

/** Creates a token for the worker `name`; the token itself is returned once, never stored. */
export async function createWorkerToken(
  store: WorkerTokenAdmin,
  name: string,
): Promise<{ token: string; record: WorkerTokenRecord }> {
  const problem = workerNameProblem(name);
  if (problem) throw new Error(problem);
  const token = WORKER_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const record: WorkerTokenRecord = {
    id: randomUUID(),
    name,
    displayPrefix: token.slice(0, WORKER_TOKEN_PREFIX.length + 4),
    createdAt: new Date().toISOString(),
    lastUsedAt: null,
    revokedAt: null,
  };
  await store.createWorkerToken(record, hashWorkerToken(token));
  return { token, record };
}
