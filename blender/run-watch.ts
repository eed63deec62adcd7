// The limits of a running Blender and how it is stopped: a total time and a time without output,
// and SIGTERM to its whole process group, SIGKILL after the grace. Output comes a line at a time,
// thousands per job: each one only notes the time, and one timer checks it when it is due
// (re-arming a timer per line cost more than parsing the line).

/** Limits of a long-lived process's current piece of work (0 = off). */
export interface BlenderLimits {
  /** From now, the most the work may take before the group is killed (BlenderTimeoutError, reason `timeout`). */
  totalMs: number;
  /** The most time without an output line (BlenderTimeoutError, reason `idle`). */
  idleMs: number;
}

export type StopReason = 'timeout' | 'idle' | 'abort';

export class RunWatch {
  /** Why the group was stopped, once it was. */
  stopReason: StopReason | undefined;
  /** The run's outcome is decided: no timer may act any more. */
  settled = false;
  /** The process group; unset until the spawn. */
  pid: number | undefined;
  private totalTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private lastOutputAt = performance.now();

  constructor(
    public limits: BlenderLimits,
    private readonly graceMs: number,
  ) {}

  stop(reason: StopReason): void {
    if (this.stopReason || this.settled) return;
    this.stopReason = reason;
    const pid = this.pid;
    if (pid === undefined) return;
    killGroup(pid, 'SIGTERM');
    this.killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), this.graceMs);
  }

  /** Blender printed something: the idle limit counts from now. */
  output(): void {
    this.lastOutputAt = performance.now();
    if (!this.idleTimer && this.limits.idleMs > 0 && !this.stopReason && !this.settled)
      this.idleTimer = setTimeout(() => this.checkIdle(), this.limits.idleMs);
  }

  /** Replaces the limits; they count from now. */
  arm(next: BlenderLimits): void {
    this.limits = next;
    clearTimeout(this.totalTimer);
    this.totalTimer =
      next.totalMs > 0 && !this.settled ? setTimeout(() => this.stop('timeout'), next.totalMs) : undefined;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.output();
  }

  /** The outcome is decided: every timer goes. */
  settle(): void {
    this.settled = true;
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.killTimer);
  }

  private checkIdle(): void {
    this.idleTimer = undefined;
    if (this.limits.idleMs <= 0 || this.stopReason || this.settled) return;
    const left = this.lastOutputAt + this.limits.idleMs - performance.now();
    if (left <= 0) this.stop('idle');
    else this.idleTimer = setTimeout(() => this.checkIdle(), left);
  }
}

/** Sends a signal to a whole process group; false when the group no longer exists. */
export function killGroup(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGKILLs the group until no member is left (killed members linger as zombies until init reaps
 * them), for at most `maxMs`.
 */
export async function waitGroupGone(pid: number, maxMs: number): Promise<void> {
  const deadline = Date.now() + Math.max(maxMs, 200);
  while (killGroup(pid, 'SIGKILL') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
}
