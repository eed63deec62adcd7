// Which of a worker's lanes wait for work, and waking them: all at once when this process made
// work (kick), or one per announced task when another process did (a ready signal). Every
// process hears every signal, so waking one lane per task, not all, keeps wasted claims (each
// one a query on the queue's server) to one per other process.
import type { TaskKind } from '../../ports/tasks.js';

interface Waiting {
  kinds: readonly TaskKind[];
  wake: () => void;
}

export class IdleLanes {
  /** Longest-waiting first. */
  private waiting: Waiting[] = [];
  /** Kinds of the lanes inside a claim call right now (one entry per lane). */
  private readonly claimingNow: (readonly TaskKind[])[] = [];
  /** Kinds signalled while a lane of theirs was claiming: it may have missed the task. */
  private readonly missed = new Set<TaskKind>();

  /** Runs `claim` for a lane of `kinds`, noting that the lane is claiming meanwhile. */
  async claiming<T>(kinds: readonly TaskKind[], claim: () => Promise<T>): Promise<T> {
    this.claimingNow.push(kinds);
    try {
      return await claim();
    } finally {
      this.claimingNow.splice(this.claimingNow.indexOf(kinds), 1);
    }
  }

  /**
   * Waits up to `ms`, until woken, or until `until` settles (the lane's own task ended). Resolves at
   * once when a signal for `kinds` came during the lane's last claim.
   */
  async wait(kinds: readonly TaskKind[], ms: number, until?: Promise<unknown>): Promise<void> {
    let missed = false;
    for (const k of kinds) missed = this.missed.delete(k) || missed;
    if (missed) return;
    await new Promise<void>((resolve) => {
      const entry: Waiting = {
        kinds,
        wake: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const leave = () => {
        clearTimeout(timer);
        this.waiting = this.waiting.filter((w) => w !== entry);
        resolve();
      };
      const timer = setTimeout(leave, ms);
      this.waiting.push(entry);
      // Leaving the list too: a lane back at work must not swallow a wake-up meant for an idle one.
      until?.then(leave, leave);
    });
  }

  /** Wakes every waiting lane. */
  wakeAll(): void {
    for (const w of this.waiting.splice(0)) w.wake();
  }

  /** Wakes the longest-waiting lane that runs `kind`; lanes busy with tasks claim again when done anyway. */
  wakeOne(kind: TaskKind): void {
    const i = this.waiting.findIndex((w) => w.kinds.includes(kind));
    if (i >= 0) this.waiting.splice(i, 1)[0]!.wake();
    else if (this.claimingNow.some((kinds) => kinds.includes(kind))) this.missed.add(kind);
  }
}
