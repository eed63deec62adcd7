// Per-worker credentials of the internal worker API. Each token names one worker; only its
// SHA-256 is stored. The worker API reads them (WorkerTokenAuth), `renderbridge admin` manages
// them (WorkerTokenAdmin); an adapter implements both.

export interface WorkerTokenRecord {
  id: string;
  /**
   * The worker this token belongs to (letters, digits, `.`, `_`, `-`). A remote worker's task
   * leases and heartbeats carry ids starting `name:`, which is how the worker API scopes it.
   */
  name: string;
  /** First characters of the token, for recognising it in listings; never enough to use it. */
  displayPrefix: string;
  createdAt: string;
  /** When a call last authenticated with it, to the minute (null: never used). */
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** What authentication reads: one lookup per call, so a revoke takes effect at the next one. */
export interface WorkerTokenAuth {
  /** The token with this SHA-256, revoked or not. */
  findWorkerToken(hash: Buffer): Promise<WorkerTokenRecord | undefined>;
  /** Records a use (callers throttle it to about once a minute per token). */
  markWorkerTokenUsed(id: string, at: string): Promise<void>;
}

/** What the admin commands do. */
export interface WorkerTokenAdmin {
  /** Fails when an active token already has this name (one identity, one live credential). */
  createWorkerToken(rec: Omit<WorkerTokenRecord, 'lastUsedAt' | 'revokedAt'>, hash: Buffer): Promise<void>;
  listWorkerTokens(): Promise<WorkerTokenRecord[]>;
  /**
   * Revokes the active token with this id, or else the active token with this name; the revoked
   * record, or undefined when none.
   */
  revokeWorkerToken(idOrName: string): Promise<WorkerTokenRecord | undefined>;
}

export type WorkerTokenStore = WorkerTokenAuth & WorkerTokenAdmin;
