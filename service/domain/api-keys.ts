import { hash, randomBytes, randomUUID } from 'node:crypto';
import { API_KEY_PREFIX } from '../../shared/constants.js';
import type { ApiKeyRecord, KeyStore } from '../ports/keys.js';

/** Keys carry 256 random bits, so one fast hash is as strong as a slow KDF and keeps auth cheap. */
export function hashApiKey(key: string): Buffer {
  // One-shot crypto.hash: no Hash object per request.
  return hash('sha256', key, 'buffer');
}

/** A new key: the fixed prefix and 256 random bits, base64url (43 characters). */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Creates a key for a workspace (created when new). The key itself is returned once, never stored. */
export async function createApiKey(
  keys: KeyStore,
  opts: { workspace: string; label: string; user?: string },
): Promise<{ key: string; record: ApiKeyRecord }> {
  const ws = await keys.ensureWorkspace(opts.workspace);
  const userId = await keys.ensureUser(ws.id, opts.user ?? 'admin');
  const key = generateApiKey();
  const record: ApiKeyRecord = {
    id: randomUUID(),
    workspaceId: ws.id,
    workspaceName: ws.name,
    userId,
    label: opts.label,
    displayPrefix: key.slice(0, API_KEY_PREFIX.length + 4),
    createdAt: new Date().toISOString(),
    revokedAt: null,
  };
  await keys.createKey(record, hashApiKey(key));
  return { key, record };
}
