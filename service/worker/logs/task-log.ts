// The log of one run of a task attempt, written by the worker that runs it: every line a program
// of the task prints (Blender, ffmpeg) and the worker's own notes, each with a timestamp. Who runs
// it (the start object) and new bytes are stored about once a second as numbered segments, so the
// service can serve the log while the task runs; a run shorter than that stores its objects once,
// when it ends (a warm slot's tasks often last a few frames, and each store is a file written
// beside Blender's). Past the head, segments that fall out of the kept tail are deleted (the
// reader sees the gap). When the run ends, however it ends, the capped log (HeadTail) is stored as one object
// and the segments go. A worker that dies leaves its segments, which the reader still serves.
import { Readable } from 'node:stream';
import type { ObjectStorage } from '../../ports/storage.js';
import { segmentKey, type RunEnd, type RunStart } from '../../domain/task-log-keys.js';
import { HeadTail } from './head-tail.js';

export type LogStream = 'stdout' | 'stderr';

/** What a task's handlers write to: the lines of the programs they run, and notes of their own. */
export interface TaskLogLines {
  /** One line a program printed (no trailing newline). */
  line(stream: LogStream, text: string): void;
  /** One line of the worker's own (`[renderbridge] ...`). */
  note(text: string): void;
}

export interface TaskLogOptions {
  storage: Pick<ObjectStorage, 'put' | 'delete' | 'deletePrefix'>;
  /** The run's key stem (runStem). */
  stem: string;
  start: RunStart;
  /** Most bytes kept per run, head and tail halves. Default 16 MiB. */
  maxBytes?: number;
  /** How often new bytes are stored while the run goes on. Default 1000 ms. */
  flushMs?: number;
  /** Folders of this machine replaced by `<worker>` in every line (Blender names its work folder). Default none. */
  redact?: readonly string[];
  /**
   * Told when storing fails (the task itself goes on): once for the bytes of the running log, and
   * again when its end is refused (`end`: the run then reads as interrupted). Default: ignored.
   */
  onError?: (err: unknown, end: boolean) => void;
}

interface Piece {
  offset: number;
  bytes: Buffer;
}

export class TaskLog implements TaskLogLines {
  private readonly kept: HeadTail;
  private pending: Piece[] = [];
  /** Bytes in `pending`: once past the cap, pieces that fell out of the middle are dropped. */
  private pendingBytes = 0;
  /** The start object is stored with the first flush. */
  private started = false;
  private readonly segments: { key: string; offset: number; end: number }[] = [];
  private seq = 0;
  private chain: Promise<void>;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private failed = false;
  private readonly redact: readonly string[];

  constructor(private readonly o: TaskLogOptions) {
    this.kept = new HeadTail(o.maxBytes ?? 16 * 2 ** 20);
    this.redact = (o.redact ?? []).filter((p) => p.length > 1).sort((a, b) => b.length - a.length);
    this.chain = Promise.resolve();
    this.timer = setInterval(() => this.flush(), o.flushMs ?? 1000);
    this.timer.unref();
  }

  line(stream: LogStream, text: string): void {
    this.add(stream === 'stderr' ? `[stderr] ${text}` : text);
  }

  note(text: string): void {
    this.add(`[renderbridge] ${text}`);
  }

  /** Stores what is new now (also done by the timer). */
  flush(): Promise<void> {
    this.chain = this.chain.then(() => this.flushNow());
    return this.chain;
  }

  /**
   * Ends the run: a last note, the capped log as one object, how it ended, then the segments are
   * deleted. Never throws; a second call does nothing.
   */
  async close(outcome: string, message?: string): Promise<void> {
    if (this.closed) return;
    this.note(`attempt ended: ${outcome}${message ? `: ${message}` : ''}`);
    this.closed = true;
    clearInterval(this.timer);
    // What no segment holds yet goes into the .log only.
    this.pending = [];
    this.pendingBytes = 0;
    await this.flush();
    const end: RunEnd = {
      endedAt: new Date().toISOString(),
      outcome,
      ...(message ? { message: this.scrub(message) } : {}),
      totalBytes: this.kept.totalBytes,
      headBytes: this.kept.headSize,
      tailStart: this.kept.tailStart,
    };
    this.chain = this.chain.then(async () => {
      // The segments stay unless both objects are stored: the reader then still has the run.
      // Said even after an earlier failure was: how the run reads (interrupted) hangs on these two.
      if (!(await this.storeOk(`${this.o.stem}.log`, this.kept.render(), true))) return;
      if (!(await this.storeOk(`${this.o.stem}.end.json`, Buffer.from(JSON.stringify(end)), true))) return;
      if (this.seq > 0) await this.o.storage.deletePrefix(`${this.o.stem}/`).catch((err: unknown) => this.report(err));
    });
    await this.chain;
  }

  private add(text: string): void {
    if (this.closed) return;
    const line = Buffer.from(`${this.stamp()} ${this.scrub(text)}\n`);
    const at = this.kept.totalBytes;
    const bytes = this.kept.add(line);
    this.pending.push({ offset: at, bytes });
    this.pendingBytes += bytes.length;
    // Pieces fall out of the middle only past the cap; dropping them once per cap's worth of new
    // bytes keeps memory bounded without walking the pending list on every line.
    if (this.pendingBytes > this.kept.capBytes && this.kept.omittedBytes > 0) this.dropPending();
  }

  private dropPending(): void {
    this.dropOmitted(
      this.pending,
      (p) => p.offset,
      (p) => p.offset + p.bytes.length,
    );
    this.pendingBytes = this.pending.reduce((n, p) => n + p.bytes.length, 0);
  }

  private stampMs = 0;
  private stampText = '';

  /**
   * The time of a line: Blender prints dozens in the same millisecond, and formatting one costs
   * more than the rest of the line.
   */
  private stamp(): string {
    const now = Date.now();
    if (now !== this.stampMs) {
      this.stampMs = now;
      this.stampText = new Date(now).toISOString();
    }
    return this.stampText;
  }

  private scrub(text: string): string {
    let t = text;
    for (const p of this.redact) if (t.includes(p)) t = t.split(p).join('<worker>');
    return t;
  }

  /**
   * Removes the items lying wholly in the omitted middle (after the head, before the kept tail);
   * returns them. Pieces not stored yet and stored segments follow the same rule.
   */
  private dropOmitted<T>(items: T[], start: (t: T) => number, end: (t: T) => number): T[] {
    const headEnd = this.kept.headSize;
    const tailStart = this.kept.tailStart;
    const gone = items.filter((t) => start(t) >= headEnd && end(t) <= tailStart);
    if (gone.length) items.splice(0, items.length, ...items.filter((t) => !gone.includes(t)));
    return gone;
  }

  private async flushNow(): Promise<void> {
    if (!this.started) {
      this.started = true;
      await this.store(`${this.o.stem}.json`, Buffer.from(JSON.stringify(this.o.start)));
    }
    if (this.kept.omittedBytes > 0) this.dropPending();
    const pieces = this.pending;
    if (pieces.length === 0) return;
    this.pending = [];
    this.pendingBytes = 0;
    // Pieces are contiguous unless some fell out of the tail: each contiguous run is one segment.
    let group: Piece[] = [];
    const groups: Piece[][] = [];
    for (const p of pieces) {
      const last = group.at(-1);
      if (last && last.offset + last.bytes.length !== p.offset) {
        groups.push(group);
        group = [];
      }
      group.push(p);
    }
    groups.push(group);
    for (const g of groups) {
      const offset = g[0]!.offset;
      const bytes = Buffer.concat(g.map((p) => p.bytes));
      const key = segmentKey(this.o.stem, ++this.seq, offset);
      if (await this.storeOk(key, bytes)) this.segments.push({ key, offset, end: offset + bytes.length });
    }
    for (const s of this.dropOmitted(
      this.segments,
      (x) => x.offset,
      (x) => x.end,
    )) {
      await this.o.storage.delete(s.key).catch((err: unknown) => this.report(err));
    }
  }

  private store(key: string, bytes: Buffer): Promise<void> {
    return this.storeOk(key, bytes).then(() => undefined);
  }

  private async storeOk(key: string, bytes: Buffer, end = false): Promise<boolean> {
    try {
      // A log is a diagnosis, not a product: a machine crash may cut its last second short, and
      // its stores never wait for the disk (a sync per store slowed the render beside it).
      await this.o.storage.put(key, Readable.from([bytes]), { sync: false });
      return true;
    } catch (err) {
      this.report(err, end);
      return false;
    }
  }

  private report(err: unknown, end = false): void {
    if (this.failed && !end) return;
    this.failed = true;
    this.o.onError?.(err, end);
  }
}

/** Lines written nowhere: a handler run without a log (tests, a runtime built without storage). */
export const NO_TASK_LOG: TaskLogLines = { line: () => undefined, note: () => undefined };
