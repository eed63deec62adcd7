// One process of the test render farm (farm.ts): its output kept line by line, the frames its
// Blender processes render, and a kill that acts like pulling the plug on a machine: SIGKILL to its
// process group and to the Blender processes it started (Blender runs detached, in its own group, so
// killing the worker's group alone would leave it rendering).
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { blenderProcesses, frameArgs } from '../../helpers/e2e.js';

/** Lines of output kept per process (for the failure report and log checks). */
const LOG_LINES = 20_000;

/** One started process: its output, and a kill that acts like pulling the plug. */
export class FarmProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    /** Folder whose path the process's Blender runs carry in their argv (workers), else undefined. */
    readonly workDir?: string,
  ) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    const keep = (stream: NodeJS.ReadableStream | null, tag: string) => {
      let rest = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (d: string) => {
        const parts = (rest + d).split('\n');
        rest = parts.pop() ?? '';
        for (const p of parts) this.lines.push(`${tag} ${p}`);
        if (this.lines.length > LOG_LINES) this.lines.splice(0, this.lines.length - LOG_LINES);
      });
    };
    keep(child.stdout, 'out');
    keep(child.stderr, 'err');
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Whether any output line so far contains `text`. */
  logged(text: string): boolean {
    return this.lines.some((l) => l.includes(text));
  }

  /**
   * Blender processes of this worker that are rendering frames, with their (first) frame: a chunk's
   * from its argv (-s/-e), a warm Blender's from the worker's last `frame begun` log line (one slot).
   */
  renders(): { pid: number; frame: number }[] {
    if (!this.workDir) return [];
    return blenderProcesses(this.workDir + path.sep).flatMap((p) => {
      const f = frameArgs(p.argv);
      if (f) return [{ pid: p.pid, frame: f.start }];
      const begun = this.lines.findLast((l) => l.includes('"frame begun"'));
      const frame = Number(/"frame":(\d+)/.exec(begun ?? '')?.[1]);
      return Number.isFinite(frame) ? [{ pid: p.pid, frame }] : [];
    });
  }

  /**
   * SIGKILL to the process group and to this worker's Blender processes; resolves once all of
   * them are dead. A killed Blender keeps its argv readable until the kernel has torn it down,
   * which takes a moment for a process that holds a scene, so this waits for that too.
   */
  async kill(): Promise<void> {
    this.killNow();
    await this.exited;
    const until = Date.now() + 10_000;
    while (this.workDir && blenderProcesses(this.workDir + path.sep).length > 0) {
      if (Date.now() > until) throw new Error(`${this.name}: its Blender processes outlived SIGKILL by 10 s`);
      this.killNow();
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The synchronous part of kill (also used at process exit). */
  killNow(): void {
    const pid = this.child.pid;
    if (pid !== undefined && this.alive) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        this.child.kill('SIGKILL');
      }
    }
    if (!this.workDir) return;
    for (const b of blenderProcesses(this.workDir + path.sep)) {
      try {
        process.kill(b.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** The last `n` lines of output, for a failure report. */
  tail(n = 40): string {
    return [
      `--- ${this.name} (${this.alive ? 'running' : `exited ${this.child.exitCode ?? this.child.signalCode}`}) ---`,
      ...this.lines.slice(-n),
    ].join('\n');
  }
}
