// Whether another connection (another process: a worker, the admin CLI) has committed since we
// last looked, for the read caches of hot paths. `PRAGMA data_version` answers that, but reading
// it costs about 2 us: as much as the lookup it would guard. Under load it is read at most once
// per `everyMs`, so what another process commits is seen within that time. This connection's own
// writes never move data_version: the stores that cache drop entries they write themselves.
import type Database from 'better-sqlite3';

export class CommitWatch {
  private readonly stmt: Database.Statement<[], number>;
  private seen = -1;
  private checkedAt = Number.NEGATIVE_INFINITY;

  /** `everyMs`: how stale another process's commits may look, at most. Default 1 ms. */
  constructor(
    raw: Database.Database,
    private readonly everyMs = 1,
  ) {
    this.stmt = raw.prepare('pragma data_version').pluck() as Database.Statement<[], number>;
  }

  /** A number that changes once another connection has committed. */
  version(): number {
    const now = performance.now();
    if (now - this.checkedAt >= this.everyMs) {
      this.checkedAt = now;
      this.seen = this.stmt.get()!;
    }
    return this.seen;
  }
}
