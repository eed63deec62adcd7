// Workspaces, their users and API keys.

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  workspaceName: string;
  userId: string;
  label: string;
  /** First characters of the key, for recognising it in listings; never enough to use it. */
  displayPrefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/** Workspaces, their users and API keys. Keys are stored only as SHA-256 hashes. */
/** A key record as authentication reads it. */
export type FoundKey = ApiKeyRecord & { keyHash: Buffer };

export interface KeyStore {
  ensureWorkspace(name: string): Promise<{ id: string; name: string }>;
  createKey(rec: Omit<ApiKeyRecord, 'workspaceName' | 'revokedAt'>, keyHash: Buffer): Promise<void>;
  /**
   * The key with this SHA-256, revoked or not. An adapter that can answer from memory returns the
   * value itself rather than a promise, so authentication finishes without a trip through the
   * microtask queue (it runs on every request).
   */
  findByHash(keyHash: Buffer): FoundKey | undefined | Promise<FoundKey | undefined>;
  listKeys(workspaceName?: string): Promise<ApiKeyRecord[]>;
  /** Returns false when no such active key exists. */
  revokeKey(id: string): Promise<boolean>;
  ensureUser(workspaceId: string, name: string): Promise<string>;
}
