// Dashboard sessions: an API key exchanged for a short-lived cookie. Only the SHA-256 of a
// session id is stored, so a copy of the database cannot be replayed as cookies.

export interface SessionRecord {
  /** SHA-256 of the session id (the cookie's value); the id itself is never stored. */
  idHash: Buffer;
  /** The API key the session was opened with: revoking it ends the session at once. */
  keyId: string;
  workspaceId: string;
  userId: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms of the last request seen (written at most about once a minute, see touch). */
  lastSeenAt: number;
  /** Epoch ms after which the session ends however active it is (the absolute expiry). */
  expiresAt: number;
}

/** A session as authentication reads it: with its workspace's name and whether its key still works. */
export interface FoundSession extends SessionRecord {
  workspaceName: string;
  keyRevoked: boolean;
}

/** What the sessions routes and the auth hook need from the state database. */
export interface SessionStore {
  create(rec: SessionRecord): Promise<void>;
  /** The session with this id hash, joined with its key; undefined when there is none. */
  find(idHash: Buffer): Promise<FoundSession | undefined>;
  /** Records activity (the idle expiry counts from `lastSeenAt`). */
  touch(idHash: Buffer, lastSeenAt: number): Promise<void>;
  /** Ends the session; false when there was none. */
  delete(idHash: Buffer): Promise<boolean>;
  /**
   * Deletes up to `limit` sessions that ended by `now`: past their absolute expiry, or idle since
   * before `idleSince`. Returns how many.
   */
  deleteEnded(now: number, idleSince: number, limit: number): Promise<number>;
}
