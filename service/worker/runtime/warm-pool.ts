// The warm processes of a worker's render slots: each slot keeps at most one (one loaded scene per
// slot), for one key (a job and the Blender build rendering it), and reuses it for every frame of
// that key it is handed. A slot asked for another key waits until its process has no frame left,
// ends it, and starts the new one. Idle processes are ended after `idleMs` (or the keep time the
// last use asked for: an estimate's Blender waits longer for its job's render), and at once while
// the machine runs short of memory (MemAvailable below `minFreeMemoryBytes`), so a warm scene never
// keeps memory a load elsewhere needs.
import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';
import type { Logger } from 'pino';

/** What the pool needs of a warm process. */
export interface WarmProcess {
  /** False once it is ending or gone. */
  readonly alive: boolean;
  /** Settles (never rejects) once it is gone. */
  readonly ended: Promise<unknown>;
  /** Stops it now. */
  kill(): void;
  /** True while it loads its scene (shown as the slot's state). Default: never said. */
  readonly loading?: boolean;
}

export interface WarmPoolOptions {
  /** How long a process with no frame to render is kept for more of its job. Default 60000 ms. */
  idleMs?: number;
  /** Idle processes are ended while the memory available to new processes is below this. Default 1 GiB. */
  minFreeMemoryBytes?: number;
  /** How often the memory is checked while a process is idle. Default 2000 ms. */
  memoryCheckMs?: number;
  /** Memory available to new processes, bytes. Default: MemAvailable of /proc/meminfo, else os.freemem(). */
  availableMemory?: () => number;
  /**
   * Whether an idle process's job still wants it, asked every `wantedCheckMs` while it idles: a
   * worker on another machine is not told of a cancel, and an estimate's Blender kept for the render
   * has no task whose heartbeat would hear it. Errors count as wanted. Default: always wanted.
   */
  wanted?: (jobId: string) => Promise<boolean>;
  /** How often `wanted` is asked. Default 5000 ms. */
  wantedCheckMs?: number;
  log?: Logger;
}

/** How one use leaves its process. */
export interface UseOptions {
  /**
   * How long the process waits idle for its key's next use after this one, instead of the pool's
   * `idleMs` (an estimate's Blender waits for its job's render). Default: the pool's `idleMs`.
   */
  keepMs?: number;
}

/** MemAvailable (what the kernel can give without swapping), bytes; os.freemem() where /proc is missing. */
export function availableMemory(): number {
  try {
    const m = /^MemAvailable:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return freemem();
}

interface Entry<P extends WarmProcess> {
  key: string;
  jobId: string;
  proc: P;
  users: number;
  /** The keep time the last use asked for; undefined: the pool's idleMs. */
  keepMs?: number;
  idleTimer?: NodeJS.Timeout;
}

interface Slot<P extends WarmProcess> {
  entry?: Entry<P>;
  /** Resolved (and replaced) whenever the entry's last user leaves. */
  free: { promise: Promise<void>; resolve: () => void };
}

function gate(): Slot<never>['free'] {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export class WarmPool<P extends WarmProcess> {
  private readonly slots = new Map<string, Slot<P>>();
  private readonly idleMs: number;
  private readonly minFree: number;
  private readonly memoryCheckMs: number;
  private readonly available: () => number;
  private memoryTimer: NodeJS.Timeout | undefined;
  private wantedAt = 0;
  private closed = false;

  constructor(private readonly opts: WarmPoolOptions = {}) {
    this.idleMs = Math.max(0, opts.idleMs ?? 60_000);
    this.minFree = opts.minFreeMemoryBytes ?? 2 ** 30;
    this.memoryCheckMs = opts.memoryCheckMs ?? 2000;
    this.available = opts.availableMemory ?? availableMemory;
  }

  /**
   * Runs `fn` with slot `slot`'s process for `key`, started with `start` when the slot has none for
   * it (a dead one is replaced; another key's is ended once its frames are done). The process is
   * kept for the next call when `fn` ends, however it ends, for `opts.keepMs` when given.
   */
  async use<T>(
    slot: string,
    key: string,
    jobId: string,
    start: () => P,
    fn: (proc: P) => Promise<T>,
    opts: UseOptions = {},
  ): Promise<T> {
    const s = this.slot(slot);
    let entry: Entry<P>;
    for (;;) {
      if (this.closed) throw new Error('the worker is stopping');
      const e = s.entry;
      if (e && e.key === key && e.proc.alive) {
        entry = e;
        break;
      }
      if (e && e.key !== key && e.users > 0) {
        await s.free.promise;
        continue;
      }
      if (e) {
        // Another key: another job, or the same job with other settings (warm-key.ts).
        const why = e.jobId === jobId ? 'its job needs other settings' : 'another job needs the slot';
        await this.end(s, e, e.proc.alive ? why : undefined);
        continue; // someone else may have started one meanwhile
      }
      if (this.available() < this.minFree && this.idleOthers(s).length > 0) {
        await this.endIdle('memory is short', s);
        continue;
      }
      s.entry = { key, jobId, proc: start(), users: 0 };
    }
    entry.users++;
    entry.keepMs = opts.keepMs;
    clearTimeout(entry.idleTimer);
    try {
      return await fn(entry.proc);
    } finally {
      entry.users--;
      if (entry.users === 0) {
        const free = s.free;
        s.free = gate();
        free.resolve();
        this.idle(s, entry);
      }
    }
  }

  /**
   * Starts `key`'s process on `slot` ahead of its first frame, when the slot holds nothing (a job
   * just planned: its scene loads while its first frames are being claimed). Never displaces
   * another process. Returns whether it started one.
   */
  prestart(slot: string, key: string, jobId: string, start: () => P): boolean {
    const s = this.slot(slot);
    if (this.closed || s.entry?.proc.alive) return false;
    const entry: Entry<P> = { key, jobId, proc: start(), users: 0 };
    s.entry = entry;
    this.idle(s, entry);
    return true;
  }

  /** Ends the processes of a job (canceled, failed or finished). */
  async endJob(jobId: string, why = 'its job ended'): Promise<void> {
    await Promise.all(
      [...this.slots.values()].map((s) => (s.entry?.jobId === jobId ? this.end(s, s.entry, why) : undefined)),
    );
  }

  /** Processes alive now, by slot (for logs and tests). */
  live(): { slot: string; key: string; jobId: string; users: number; loading: boolean }[] {
    return [...this.slots.entries()].flatMap(([slot, s]) =>
      s.entry?.proc.alive
        ? [
            {
              slot,
              key: s.entry.key,
              jobId: s.entry.jobId,
              users: s.entry.users,
              loading: s.entry.proc.loading ?? false,
            },
          ]
        : [],
    );
  }

  /** Ends every process and refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.memoryTimer);
    await Promise.all(
      [...this.slots.values()].map((s) => (s.entry ? this.end(s, s.entry, 'the worker is stopping') : undefined)),
    );
  }

  private slot(name: string): Slot<P> {
    let s = this.slots.get(name);
    if (!s) {
      s = { free: gate() };
      this.slots.set(name, s);
    }
    return s;
  }

  private idle(s: Slot<P>, e: Entry<P>): void {
    if (!e.proc.alive) {
      if (s.entry === e) s.entry = undefined;
      return;
    }
    const ms = Math.max(0, e.keepMs ?? this.idleMs);
    e.idleTimer = setTimeout(() => void this.end(s, e, `idle for ${ms} ms`), ms);
    e.idleTimer.unref?.();
    this.watchMemory();
  }

  /** While any process idles, checks the memory every memoryCheckMs (and its job, every wantedCheckMs). */
  private watchMemory(): void {
    if (this.memoryTimer || this.memoryCheckMs <= 0) return;
    this.memoryTimer = setInterval(() => {
      const idle = [...this.slots.values()].some((s) => s.entry && s.entry.users === 0);
      if (!idle) {
        clearInterval(this.memoryTimer);
        this.memoryTimer = undefined;
        return;
      }
      if (this.available() < this.minFree) void this.endIdle('memory is short');
      if (this.opts.wanted && Date.now() - this.wantedAt >= (this.opts.wantedCheckMs ?? 5000)) {
        this.wantedAt = Date.now();
        void this.endUnwanted(this.opts.wanted);
      }
    }, this.memoryCheckMs);
    this.memoryTimer.unref?.();
  }

  private idleOthers(except?: Slot<P>): Slot<P>[] {
    return [...this.slots.values()].filter((s) => s !== except && s.entry && s.entry.users === 0);
  }

  private async endIdle(why: string, except?: Slot<P>): Promise<void> {
    await Promise.all(this.idleOthers(except).map((s) => (s.entry ? this.end(s, s.entry, why) : undefined)));
  }

  private async endUnwanted(wanted: (jobId: string) => Promise<boolean>): Promise<void> {
    const jobs = new Set(this.idleOthers().map((s) => s.entry!.jobId));
    for (const jobId of jobs) if (!(await wanted(jobId).catch(() => true))) await this.endJob(jobId, 'its job ended');
  }

  private async end(s: Slot<P>, e: Entry<P>, why: string | undefined): Promise<void> {
    clearTimeout(e.idleTimer);
    if (s.entry === e) s.entry = undefined;
    if (e.proc.alive) {
      this.opts.log?.info({ warm: e.key, jobId: e.jobId, reason: why }, 'warm Blender ended');
      e.proc.kill();
    }
    await e.proc.ended;
  }
}
