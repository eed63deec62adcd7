// "A task of this kind may be claimable now", sent to every process that shares a task queue, so
// an idle worker claims at once instead of at its next poll. Best effort by design: a lost,
// late or spurious signal only means the poll finds the task, so nothing depends on delivery.
import { TASK_KINDS, type TaskKind } from '../ports/tasks.js';

/** How the signal travels between processes (PostgreSQL NOTIFY, Redis pub/sub). */
export interface SignalBus {
  /** Sends `message` to every subscriber, this process's included. */
  publish(message: string): Promise<void>;
  /** Delivers each message until the returned function is called; reconnects by itself. */
  subscribe(onMessage: (message: string) => void): Promise<() => Promise<void>>;
}

const KINDS = new Set<string>(TASK_KINDS);
/** Listener calls per kind and message at most. */
const MAX_WAKES = 64;

export class ReadySignal {
  /** Announcements per kind not sent yet. */
  private readonly pending = new Map<TaskKind, number>();
  private readonly listeners = new Set<(kind: TaskKind) => void>();
  private subscription: Promise<(() => Promise<void>) | undefined> | undefined;
  private closed = false;
  private lastReport = 0;
  private lastFlush = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly bus: SignalBus,
    /** Gets publish and subscribe failures; the queue goes on working by polling. */
    private readonly onError: (err: Error) => void = () => {},
    /** Shortest time between two messages of this process. Default 10 ms. */
    private readonly minIntervalMs = 10,
  ) {}

  /** Failures are reported at most once a minute: an outage must not flood the log. */
  private report(err: unknown): void {
    const now = Date.now();
    if (now - this.lastReport < 60_000) return;
    this.lastReport = now;
    this.onError(err instanceof Error ? err : new Error(String(err)));
  }

  /**
   * Announces `kind`. The first announcement goes out at once; those that follow within
   * `minIntervalMs` travel together at its end, so a burst of enqueues sends a few messages, not
   * one per task (each message wakes a lane in every process).
   */
  notify(kind: TaskKind): void {
    if (this.closed) return;
    this.pending.set(kind, (this.pending.get(kind) ?? 0) + 1);
    if (this.timer) return;
    const wait = Math.max(0, this.lastFlush + this.minIntervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
  }

  private flush(): void {
    this.lastFlush = Date.now();
    if (this.pending.size === 0) return;
    // `kind:count`: a receiver wakes up to `count` idle lanes for a burst, one for a single task.
    const message = [...this.pending].map(([kind, n]) => `${kind}:${n}`).join(',');
    this.pending.clear();
    this.bus.publish(message).catch((err: unknown) => this.report(err));
  }

  /**
   * Calls `listener` once per announced task of a kind (up to 64 per message); the process
   * subscribes on the first listener.
   */
  onReady(listener: (kind: TaskKind) => void): () => void {
    this.listeners.add(listener);
    if (!this.subscription && !this.closed) {
      this.subscription = this.bus
        .subscribe((message) => {
          for (const part of message.split(',')) {
            const [kind = '', n] = part.split(':');
            if (!KINDS.has(kind)) continue;
            // More calls than any process has lanes would only be dropped by the runtime.
            const count = Math.min(Math.max(1, Number(n) || 1), MAX_WAKES);
            for (let i = 0; i < count; i++) for (const l of this.listeners) l(kind as TaskKind);
          }
        })
        .catch((err: unknown) => {
          this.report(err);
          return undefined;
        });
    }
    return () => void this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.listeners.clear();
    const unsubscribe = await this.subscription;
    await unsubscribe?.().catch(() => undefined);
  }
}
