// Rate and time left of a byte transfer (an upload, a pack), as the add-on panel, the tray and the
// CLI show them. The rate is measured over a sliding window rather than since the start, so a
// transfer that slows down (a congested line, a retry) shows it within seconds.

export interface TransferEstimate {
  /** Bytes per second over the window; 0 until two samples are at least `minSpanMs` apart. */
  bytesPerSecond: number;
  /** Seconds left at that rate; null while the rate is unknown, 0 once everything is done. */
  etaSeconds: number | null;
}

export interface TransferRateOptions {
  /** How far back samples count towards the rate, ms. Default 5000. */
  windowMs?: number;
  /** Shortest span between the oldest and newest sample that gives a rate, ms. Default 200. */
  minSpanMs?: number;
  /** Clock, for tests. Default `Date.now`. */
  now?: () => number;
}

interface Sample {
  at: number;
  bytes: number;
}

export class TransferRate {
  private readonly windowMs: number;
  private readonly minSpanMs: number;
  private readonly now: () => number;
  private samples: Sample[] = [];

  constructor(options: TransferRateOptions = {}) {
    this.windowMs = options.windowMs ?? 5000;
    this.minSpanMs = options.minSpanMs ?? 200;
    this.now = options.now ?? Date.now;
  }

  /** Records that `bytesDone` of `bytesTotal` are done now; answers the rate and time left. */
  update(bytesDone: number, bytesTotal: number): TransferEstimate {
    const at = this.now();
    const last = this.samples.at(-1);
    // A retry can take bytes back (a part sent again): start measuring afresh from there.
    if (last && bytesDone < last.bytes) this.samples = [];
    this.samples.push({ at, bytes: bytesDone });
    // Keep one sample older than the window, so the span covers the whole window.
    while (this.samples.length > 2 && (this.samples[1] as Sample).at <= at - this.windowMs) this.samples.shift();
    return this.estimate(bytesDone, bytesTotal);
  }

  private estimate(bytesDone: number, bytesTotal: number): TransferEstimate {
    const left = Math.max(0, bytesTotal - bytesDone);
    const first = this.samples[0] as Sample;
    const last = this.samples.at(-1) as Sample;
    const span = last.at - first.at;
    if (span < this.minSpanMs) return { bytesPerSecond: 0, etaSeconds: left === 0 ? 0 : null };
    const bytesPerSecond = ((last.bytes - first.bytes) * 1000) / span;
    if (left === 0) return { bytesPerSecond, etaSeconds: 0 };
    return { bytesPerSecond, etaSeconds: bytesPerSecond > 0 ? left / bytesPerSecond : null };
  }
}
