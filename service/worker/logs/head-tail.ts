// The capped text of one task attempt: the first half of the cap (the head: how Blender started,
// the scene it loaded) and a ring of the last half (the tail: how it ended), whole lines only.
// What falls between is counted and stands as one "[... N bytes omitted ...]" line.
import { omittedLine } from '../../domain/task-log-keys.js';

export class HeadTail {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private headFull = false;
  private readonly tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  /** `maxBytes`: the most kept (head + tail, the omission line aside); at least 2 bytes. */
  constructor(maxBytes: number) {
    const cap = Math.max(2, Math.floor(maxBytes));
    this.headCap = Math.floor(cap / 2);
    this.tailCap = cap - this.headCap;
  }

  /** The most bytes kept, head and tail together. */
  get capBytes(): number {
    return this.headCap + this.tailCap;
  }

  /** Bytes added so far, kept or not. */
  get totalBytes(): number {
    return this.total;
  }

  /** Bytes of the head (the run's first bytes, as kept). */
  get headSize(): number {
    return this.headBytes;
  }

  /** The run's offset where the kept tail begins (== headSize when nothing is omitted). */
  get tailStart(): number {
    return this.total - this.tailBytes;
  }

  get omittedBytes(): number {
    return this.tailStart - this.headBytes;
  }

  /**
   * Adds one line (ending in a newline); returns it as kept, which is the line itself unless it
   * alone is larger than the tail (then its end is kept, a line to the tail's size).
   */
  add(line: Buffer): Buffer {
    let kept = line;
    if (kept.length > this.tailCap)
      kept = Buffer.concat([kept.subarray(kept.length - this.tailCap, kept.length - 1), Buffer.from('\n')]);
    // A line that does not fit in the head ends the head for good: the log stays in order.
    if (!this.headFull && this.headBytes + kept.length <= this.headCap) {
      this.head.push(kept);
      this.headBytes += kept.length;
    } else {
      this.headFull = true;
      this.tail.push(kept);
      this.tailBytes += kept.length;
      while (this.tailBytes > this.tailCap) this.tailBytes -= this.tail.shift()!.length;
    }
    this.total += kept.length;
    return kept;
  }

  /** The capped log: head, the omission line when something was left out, tail. */
  render(): Buffer {
    const omitted = this.omittedBytes;
    return Buffer.concat([...this.head, ...(omitted > 0 ? [Buffer.from(omittedLine(omitted))] : []), ...this.tail]);
  }
}
